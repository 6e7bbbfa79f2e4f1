package sync

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is one slice of the table set: a table belongs to shard Index of
// Count when ShardOf(its full name, Count) == Index. The zero Shard owns
// every table.
type Shard struct {
	Index int
	Count int
}

// ParseShard parses "i/N" with 0 <= i < N. The empty string is the zero Shard.
func ParseShard(s string) (Shard, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Shard{}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want i/N, e.g. 0/3", s)
	}
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want i/N with N >= 1 and 0 <= i < N", s)
	}
	return Shard{Index: i, Count: n}, nil
}

// String renders the shard as "i/N" ("" for the zero Shard).
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Owns reports whether the table with this full name (catalog.schema.table)
// belongs to the shard.
func (s Shard) Owns(fullName string) bool {
	if s.Count <= 1 {
		return true
	}
	return ShardOf(fullName, s.Count) == s.Index
}

// ShardOf is the stable shard of a table: FNV-1a (32 bit) of the lower-cased
// full name, modulo n. It never changes between releases, so a table stays
// with its shard across restarts and versions.
func ShardOf(fullName string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(fullName)))
	return int(h.Sum32() % uint32(n))
}
