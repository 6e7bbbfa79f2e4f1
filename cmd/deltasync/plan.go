package main

import (
	"github.com/spf13/cobra"
)

func init() { register(newPlanCommand) }

// newPlanCommand shows what a sync would change, table by table, and never
// writes. Exit 0: in sync; 2: drift found; 1: error (Terraform's
// -detailed-exitcode order).
func newPlanCommand(c *cli) *cobra.Command {
	var f syncFlags
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show what would change, table by table; never writes (exit 0 in sync, 2 drift, 1 error)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.loadConfig(cmd, &f)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			a, err := c.newApp(cfg, true)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer a.rec.Close()
			rep := a.rec.Sync(cmd.Context())
			if err := writeReport(c.stdout, rep, f.output); err != nil {
				return err
			}
			if f.output != "json" {
				c.summary(rep)
			}
			switch {
			case rep.Failed() || rep.Interrupted:
				return &exitError{code: 1}
			case rep.Drift():
				return &exitError{code: 2}
			}
			return nil
		},
	}
	addSyncFlags(cmd, &f)
	return cmd
}
