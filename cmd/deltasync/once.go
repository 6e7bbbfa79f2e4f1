package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/deltasync/deltasync/sync"
)

// newOnceCommand runs one cycle: it syncs what it may and flags the rest
// (the Kubernetes CronJob entry point). Exit 0: all good; 2: drift remains
// on watch-only tables; 1: any table failed.
func newOnceCommand(c *cli) *cobra.Command {
	return c.cycleCommand(&cobra.Command{
		Use:   "once",
		Short: "Run one sync cycle (exit 0 all good, 2 drift remains on watch-only tables, 1 a table failed)",
	}, writeChanges)
}

// cycleCommand completes plan (dryRun) and once (writeChanges): both run
// exactly one Reconciler.Sync cycle and differ only in whether it may
// write. Exit 0: in sync; 2: drift (found, or left on watch-only tables);
// 1: a table failed.
func (c *cli) cycleCommand(cmd *cobra.Command, w writes) *cobra.Command {
	var f syncFlags
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		s, err := c.loadConfig(cmd, &f)
		if err != nil {
			return &exitError{code: 1, err: err}
		}
		a, err := c.newApp(s, w, cmd.Name())
		if err != nil {
			return &exitError{code: 1, err: err}
		}
		defer a.closeCatalog()
		defer a.rec.Close()
		defer a.audit.Close()
		defer a.closeNotify()
		applyMemoryLimit(a.log, cgroupRoot)
		ctx := cmd.Context()
		if f.timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, f.timeout)
			defer cancel()
		}
		rep := a.rec.Sync(ctx)
		if err := writeReport(c.stdout, rep, f.output); err != nil {
			return err
		}
		if f.out != "" {
			if err := writeSavedPlan(f.out, sync.NewSavedPlan(rep, a.catalogURL(), a.kind.Name(), version, time.Now())); err != nil {
				return &exitError{code: 1, err: err}
			}
		}
		if w == writeChanges && !rep.Failed() && s.heartbeatURL != "" {
			if err := pingHeartbeat(ctx, s.heartbeatURL); err != nil {
				a.log.Warn("heartbeat failed", zap.Error(err))
			}
		}
		if w == writeChanges && s.push.URL != "" {
			if err := pushMetrics(ctx, s.push, a.registry); err != nil {
				a.log.Warn("pushing metrics failed", zap.Error(err))
			}
		}
		if f.output == "text" { // json and markdown carry their own summary
			c.summary(rep)
		}
		if f.timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			fmt.Fprintf(c.stderr, "deltasync: --timeout %s reached; tables not reached in time are left for the next run\n", f.timeout)
			return &exitError{code: 1}
		}
		unmatched := unmatchedRules(s, rep, cmd.Flags().Changed("include"), f.configFile)
		c.reportRefused(refusedSelections(s, rep, cmd.Flags().Changed("include"), f.configFile))
		c.reportUnmatched(unmatched, f.allowEmpty)
		if f.output == "markdown" && len(unmatched) > 0 && !f.allowEmpty && !rep.Failed() {
			// The report's own exit line cannot know this: the rules are the command's.
			fmt.Fprintf(c.stdout, "\n**Exit 1**: %d table rule(s) selected no table: check the catalog, schema and table names (the log names the rules); pass `--allow-empty` if that is expected.\n", len(unmatched))
		}
		switch {
		case rep.Failed():
			return &exitError{code: 1}
		case len(unmatched) > 0 && !f.allowEmpty:
			return &exitError{code: 1}
		case rep.Drift():
			return &exitError{code: 2}
		}
		return nil
	}
	if w == dryRun {
		addSyncFlags(cmd, &f, "output", "allow-empty", "timeout", "out")
	} else {
		addSyncFlags(cmd, &f, "output", "allow-empty", "timeout", "heartbeat-url", "pushgateway-url", "audit-file")
	}
	return cmd
}

// summary prints the one-line cycle summary.
func (c *cli) summary(rep *sync.Report) {
	fmt.Fprintln(c.stdout, "deltasync:", rep.Summary())
}
