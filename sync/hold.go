package sync

import (
	"fmt"
	"strings"

	"github.com/deltasync/deltasync/sync/change"
	"github.com/deltasync/deltasync/sync/plan"
)

// OnDestructive says what a sync does with an update that carries a
// destructive change (ClassDestructive: a column dropped or renamed, a
// type changed other than a sanctioned widening, nullability tightened,
// partitioning changed, clustering removed, a property removed).
type OnDestructive string

const (
	// OnDestructiveSync sends it: the log wins (the default).
	OnDestructiveSync OnDestructive = "sync"
	// OnDestructiveHold holds the table's whole update, nothing of it
	// sent (so the record never mixes two versions' state), and flags the
	// table held: destructive, until a person applies a saved plan or the
	// rule changes.
	OnDestructiveHold OnDestructive = "hold"
)

// HeldDestructive is Result.Held (and a saved plan's held) of a table
// whose update was held for its destructive changes.
const HeldDestructive = change.HeldDestructive

// ParseOnDestructive checks an on_destructive value; "" means
// OnDestructiveSync.
func ParseOnDestructive(s string) (OnDestructive, error) {
	switch OnDestructive(strings.ToLower(strings.TrimSpace(s))) {
	case "", OnDestructiveSync:
		return OnDestructiveSync, nil
	case OnDestructiveHold:
		return OnDestructiveHold, nil
	}
	return "", fmt.Errorf("on_destructive %q: want sync or hold", s)
}

// whyHeld is the reason a held table is flagged with: "held: destructive:"
// and the held changes.
func whyHeld(changes []plan.Change) string {
	parts := make([]string, 0, len(changes))
	for _, c := range changes {
		parts = append(parts, c.String())
	}
	return "held: destructive: " + strings.Join(parts, "; ") +
		"; nothing sent (on_destructive: hold): apply a saved plan (deltasync plan --out FILE, then deltasync apply FILE) or set on_destructive: sync"
}
