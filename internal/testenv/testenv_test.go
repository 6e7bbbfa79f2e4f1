package testenv

import "testing"

func TestRequired(t *testing.T) {
	t.Setenv(External, "1")
	if !Required(External) {
		t.Error("Required(External) = false with it set to 1")
	}
	t.Setenv(External, "")
	if Required(External) {
		t.Error("Required(External) = true with it unset")
	}
}

func TestGetenvSkipsWhenNotRequired(t *testing.T) {
	t.Setenv(External, "")
	t.Setenv("DELTASYNC_TESTENV_PROBE", "")
	ran := false
	t.Run("probe", func(t *testing.T) {
		Getenv(t, "DELTASYNC_TESTENV_PROBE", External, "probe unset")
		ran = true
	})
	if ran {
		t.Error("Getenv returned for an unset variable")
	}
	t.Setenv("DELTASYNC_TESTENV_PROBE", "x")
	if v := Getenv(t, "DELTASYNC_TESTENV_PROBE", External, "probe unset"); v != "x" {
		t.Errorf("Getenv = %q, want x", v)
	}
}
