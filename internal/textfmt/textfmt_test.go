package textfmt

import "testing"

func TestOrDash(t *testing.T) {
	for in, want := range map[string]string{"": "—", "EXTERNAL": "EXTERNAL", " ": " "} {
		if got := OrDash(in); got != want {
			t.Errorf("OrDash(%q) = %q, want %q", in, got, want)
		}
	}
}
