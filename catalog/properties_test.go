package catalog

import (
	"maps"
	"testing"
)

// A write leaves the properties diff.ignore_properties matches as stored:
// their stored values kept, and none added that stored did not have.
func TestKeepIgnored(t *testing.T) {
	ignore := []string{"owner.*", "exact"}
	stored := map[string]string{"owner.team": "data", "exact": "1", "delta.a": "old"}
	log := LogState{Configuration: map[string]string{"owner.team": "log", "owner.new": "x", "delta.a": "new"},
		Protocol: Protocol{MinReaderVersion: 1, MinWriterVersion: 2}}
	props := LogProperties(log)
	if props["owner.team"] != "log" || props[PropMinReaderVersion] != "1" {
		t.Fatalf("LogProperties = %v: want the log's configuration and protocol", props)
	}
	DropIgnored(props, ignore)
	if _, ok := props["owner.team"]; ok || props["delta.a"] != "new" {
		t.Errorf("DropIgnored left %v", props)
	}
	next := maps.Clone(props)
	next["owner.new"] = "x" // as if a write had set it anyway
	delete(next, "exact")
	KeepIgnored(stored, next, ignore)
	want := map[string]string{"owner.team": "data", "exact": "1", "delta.a": "new", PropMinReaderVersion: "1", PropMinWriterVersion: "2"}
	if !maps.Equal(next, want) {
		t.Errorf("KeepIgnored = %v, want %v", next, want)
	}
	if !IgnoredProperty("owner.x", ignore) || IgnoredProperty("ownerx", ignore) || !IgnoredProperty("exact", ignore) {
		t.Error("IgnoredProperty: owner.* must match owner.x only, and a key matches itself")
	}
}
