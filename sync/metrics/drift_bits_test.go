package metrics

import (
	"testing"
	"unsafe"
)

// TestDriftKindsFitTheBitmask: a table's drift is kept as one bit per
// driftKinds entry in tableValues.drift (a uint8); a ninth kind would be
// dropped silently (1<<8 truncates to 0) unless the field is widened.
func TestDriftKindsFitTheBitmask(t *testing.T) {
	var v tableValues
	if bits := 8 * int(unsafe.Sizeof(v.drift)); len(driftKinds) > bits {
		t.Fatalf("%d drift kinds, but tableValues.drift holds %d bits: widen it", len(driftKinds), bits)
	}
}
