package main

import (
	"github.com/spf13/cobra"
)

// newPlanCommand shows what a sync would change, table by table, and never
// writes. Exit 0: in sync; 2: drift found; 1: error (Terraform's
// -detailed-exitcode order).
func newPlanCommand(c *cli) *cobra.Command {
	return c.cycleCommand(&cobra.Command{
		Use:   "plan",
		Short: "Show what would change, table by table; never writes (exit 0 in sync, 2 drift, 1 error)",
	}, dryRun)
}
