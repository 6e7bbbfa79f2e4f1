package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deltasync/deltasync/sync/change"
)

// newApplyCommand sends exactly the updates of a saved plan (plan --out),
// one guarded request per table. Exit 0: every table applied; 1: any
// table refused (stale: plan again) or failed, or the plan refused whole
// (another catalog, a bad file).
func newApplyCommand(c *cli) *cobra.Command {
	f := syncFlags{fromPlan: true} // the plan names its tables: no tables[] rule needed
	cmd := &cobra.Command{
		Use:   "apply PLAN_FILE",
		Short: "Send exactly a saved plan's updates, one guarded request per table (exit 0 all applied, 1 otherwise)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := c.loadConfig(cmd, &f)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			file, err := os.Open(args[0])
			if err != nil {
				return &exitError{code: 1, err: fmt.Errorf("plan file: %w", err)}
			}
			sp, err := change.ReadSavedPlan(file, args[0])
			_ = file.Close()
			if err != nil {
				return &exitError{code: 1, err: fmt.Errorf("%w; nothing applied", err)}
			}
			// No reconciler: apply reads no log and selects nothing, it
			// only sends the plan's requests.
			a, err := c.newParts(s)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer a.closeCatalog()
			if a.audit, err = s.audit.open(c.stderr); err != nil {
				return &exitError{code: 1, err: err}
			}
			defer a.audit.Close()
			if err := sp.CheckCatalog(a.catalogURL(), a.kind.Name()); err != nil {
				return &exitError{code: 1, err: err}
			}
			if err := sp.CheckWrites(a.kind); err != nil {
				return &exitError{code: 1, err: fmt.Errorf("plan file %s: %w; nothing applied", args[0], err)}
			}
			opts := change.ApplyOptions{Catalog: a.kind, Logger: a.log,
				Audit: change.AuditOptions{Writer: a.audit, Command: "apply", Version: version}}
			rep := change.Apply(cmd.Context(), opts, sp)
			if err := rep.WriteText(c.stdout); err != nil {
				return err
			}
			if !rep.Applied() {
				return &exitError{code: 1, err: fmt.Errorf("not applied: %s", strings.Join(rep.NotApplied(), ", "))}
			}
			return nil
		},
	}
	addSyncFlags(cmd, &f, "audit-file")
	return cmd
}

// writeSavedPlan writes a saved plan whole or not at all: to a temporary
// file beside it, fsynced, then renamed over name.
func writeSavedPlan(name string, sp *change.SavedPlan) error {
	var buf bytes.Buffer
	if err := sp.WriteJSON(&buf); err != nil {
		return fmt.Errorf("--out %s: %w", name, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return fmt.Errorf("--out %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("--out %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("--out %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--out %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("--out %s: %w", name, err)
	}
	return nil
}
