package main

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"go.uber.org/zap"
)

func TestCgroupMemoryLimit(t *testing.T) {
	cases := []struct {
		name, file, content string
		want                int64
		ok                  bool
	}{
		{"v2 limit", "memory.max", "536870912\n", 536870912, true},
		{"v2 unlimited", "memory.max", "max\n", 0, false},
		{"v1 limit", "memory/memory.limit_in_bytes", "268435456\n", 268435456, true},
		{"v1 unlimited", "memory/memory.limit_in_bytes", "9223372036854771712\n", 0, false},
		{"garbage", "memory.max", "lots\n", 0, false},
		{"none", "", "", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			if c.file != "" {
				p := filepath.Join(root, c.file)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := cgroupMemoryLimit(root)
			if got != c.want || ok != c.ok {
				t.Errorf("cgroupMemoryLimit = %d, %v; want %d, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

func TestApplyMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "memory.max"), []byte("1073741824\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("from the container limit", func(t *testing.T) {
		debug.SetMemoryLimit(math.MaxInt64)
		unsetenv(t, "GOMEMLIMIT")
		limit := 1073741824.0
		want := int64(limit * memoryLimitShare)
		if got := applyMemoryLimit(zap.NewNop(), root); got != want {
			t.Errorf("applyMemoryLimit = %d, want %d", got, want)
		}
		if got := debug.SetMemoryLimit(-1); got != want {
			t.Errorf("runtime soft limit %d, want %d", got, want)
		}
	})
	t.Run("GOMEMLIMIT wins", func(t *testing.T) {
		debug.SetMemoryLimit(math.MaxInt64)
		t.Setenv("GOMEMLIMIT", "300MiB")
		if got := applyMemoryLimit(zap.NewNop(), root); got != 0 {
			t.Errorf("applyMemoryLimit = %d with GOMEMLIMIT set, want 0", got)
		}
		if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
			t.Errorf("runtime soft limit changed to %d although GOMEMLIMIT is set", got)
		}
	})
	t.Run("no container limit", func(t *testing.T) {
		debug.SetMemoryLimit(math.MaxInt64)
		unsetenv(t, "GOMEMLIMIT")
		if got := applyMemoryLimit(zap.NewNop(), t.TempDir()); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
			t.Errorf("applyMemoryLimit = %d without a cgroup limit, want 0 and no limit", got)
		}
	})
}

// unsetenv unsets key for the rest of t, restoring it afterwards.
func unsetenv(t *testing.T, key string) {
	t.Helper()
	if v, set := os.LookupEnv(key); set {
		t.Setenv(key, v) // registers the restore
		if err := os.Unsetenv(key); err != nil {
			t.Fatal(err)
		}
	}
}
