package sync

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSelectorMatch(t *testing.T) {
	sel, err := NewSelector([]Rule{
		{Include: []string{"main.sales.*", "!*.tmp_*"}, Exclude: []string{"*.*.old_*"}, Mode: ModeSync},
		{Include: []string{"main.*.*"}, Exclude: []string{"main.secret.*", "*.*.old_*"}, Mode: ModeWarn},
		{Include: []string{"other.s.exact"}, Exclude: []string{"*.*.old_*"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     [3]string
		wantMode Mode
		wantOK   bool
	}{
		{[3]string{"main", "sales", "orders"}, ModeSync, true},
		{[3]string{"MAIN", "Sales", "Orders"}, ModeSync, true},
		{[3]string{"main", "sales", "tmp_x"}, ModeWarn, true}, // rule 1 excludes, rule 2 takes it
		{[3]string{"main", "hr", "people"}, ModeWarn, true},
		{[3]string{"main", "secret", "keys"}, "", false},
		{[3]string{"main", "sales", "old_orders"}, "", false}, // excluded by every rule
		{[3]string{"other", "s", "exact"}, ModeSync, true},
		{[3]string{"other", "s", "exact2"}, "", false},
		{[3]string{"x", "y", "z"}, "", false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.name[:], "."), func(t *testing.T) {
			mode, ok := sel.Match(tt.name[0], tt.name[1], tt.name[2])
			if mode != tt.wantMode || ok != tt.wantOK {
				t.Errorf("Match = %q, %v; want %q, %v", mode, ok, tt.wantMode, tt.wantOK)
			}
		})
	}
	if _, all := sel.Catalogs(); all {
		t.Errorf("Catalogs: all=true, want literal list")
	}
	if got, _ := sel.Catalogs(); !cmp.Equal(got, []string{"main", "other"}) {
		t.Errorf("Catalogs = %v", got)
	}
	if !sel.MayMatchSchema("main", "anything") || sel.MayMatchSchema("other", "t") {
		t.Errorf("MayMatchSchema wrong")
	}
	if diff := cmp.Diff([][3]string{{"other", "s", "exact"}}, sel.Explicit()); diff != "" {
		t.Errorf("Explicit (-want +got):\n%s", diff)
	}
}

func TestSelectorErrorsAllAtOnce(t *testing.T) {
	_, err := NewSelector([]Rule{
		{Include: []string{"a.b.c.d", "[x"}, Exclude: []string{"a..b"}, Mode: "push"},
	})
	if err == nil {
		t.Fatal("want error")
	}
	for _, want := range []string{"more than three", "[x", `mode "push"`, "empty part"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
