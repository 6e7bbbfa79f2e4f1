package sparkprops

import (
	"maps"
	"strings"
	"testing"
)

// TestOwnedRoundTrip: what SetOwned writes, ReadOwned reads back; another
// client's parameter is neither read as a log property nor touched, and
// Trino's cache goes when the version moves.
func TestOwnedRoundTrip(t *testing.T) {
	reserved := func(k string) bool {
		return k == KeyComment || strings.HasPrefix(k, "trino_") || k == KeyLastUpdateVersion || k == KeyLastCommitTimestamp
	}
	p := map[string]string{"owner_team": "sales", KeyTrinoVersion: "3", KeyTrinoSchema: "[]"}
	want := Owned{Comment: "orders", HasComment: true, Version: 4, CommitTimestamp: 1700000000000,
		Properties: map[string]string{"delta.appendOnly": "true", "retention": "7d"}}
	SetOwned(p, want)
	if p["owner_team"] != "sales" || p[KeySyncedProperties] != `["retention"]` {
		t.Errorf("parameters %v: want owner_team kept and retention listed as synced", p)
	}
	if _, ok := p[KeyTrinoVersion]; ok {
		t.Errorf("Trino's cache of version 3 kept at version 4: %v", p)
	}
	got, err := ReadOwned(p, reserved)
	if err != nil {
		t.Fatal(err)
	}
	if got.Comment != want.Comment || !got.HasComment || got.Version != 4 || got.CommitTimestamp != want.CommitTimestamp || !maps.Equal(got.Properties, want.Properties) {
		t.Errorf("read back %+v, want %+v", got, want)
	}

	// Trino's cache of the version written stays.
	p[KeyTrinoVersion] = "5"
	SetOwned(p, Owned{Version: 5})
	if _, synced := p[KeySyncedProperties]; p[KeyTrinoVersion] != "5" || synced {
		t.Errorf("version 5 with no property outside delta.*: %v; want Trino's cache kept, no synced list", p)
	}
	if _, ok := p[KeyComment]; ok {
		t.Error("an empty comment was kept: want it removed")
	}

	none, err := ReadOwned(map[string]string{}, reserved)
	if err != nil || none.Version != -1 || none.CommitTimestamp != -1 || none.HasComment {
		t.Errorf("no parameters: %+v, %v; want versions -1, no comment", none, err)
	}
	for _, bad := range []map[string]string{{KeyLastUpdateVersion: "-2"}, {KeyLastCommitTimestamp: "x"}, {KeySyncedProperties: "{"}} {
		if _, err := ReadOwned(bad, reserved); err == nil || !strings.Contains(err.Error(), "parameter ") {
			t.Errorf("%v: error %v, want one naming the parameter", bad, err)
		}
	}
}
