//go:build !race

package deltalog

const raceEnabled = false
