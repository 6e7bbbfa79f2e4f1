package fakeglue

import "testing"

// The SDK's amz-sdk-request header tells a call's first attempt from its
// retries: Calls counts the first only.
func TestFirstAttempt(t *testing.T) {
	for h, want := range map[string]bool{
		"attempt=1; max=5": true, "attempt=2; max=5": false, "max=5; attempt=3": false, "": true, "ttl=x; attempt=1": true,
	} {
		if got := firstAttempt(h); got != want {
			t.Errorf("firstAttempt(%q) = %v, want %v", h, got, want)
		}
	}
}
