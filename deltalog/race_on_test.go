//go:build race

package deltalog

// raceEnabled: under the race detector sync.Pool drops a share of what is
// put in it on purpose, so reuse bounds do not hold.
const raceEnabled = true
