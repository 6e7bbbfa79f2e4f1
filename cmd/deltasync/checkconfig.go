package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newCheckConfigCommand validates the configuration and prints the
// effective result (secrets redacted); every problem is reported at once.
func newCheckConfigCommand(c *cli) *cobra.Command {
	var f syncFlags
	cmd := &cobra.Command{
		Use:   "check-config",
		Short: "Validate the configuration and print the effective config (exit 1 on problems)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := c.loadConfig(cmd, &f)
			if err != nil {
				fmt.Fprintln(c.stderr, "deltasync: configuration problems:")
				for _, line := range splitErrors(err) {
					fmt.Fprintln(c.stderr, "  -", line)
				}
				return &exitError{code: 1}
			}
			out, err := s.cfg.redacted().marshalYAML()
			if err != nil {
				return err
			}
			fmt.Fprint(c.stdout, string(out))
			fmt.Fprintln(c.stderr, "deltasync: configuration OK")
			return nil
		},
	}
	addSyncFlags(cmd, &f, "listen", "schedule", "http-token-file", "heartbeat-url", "pushgateway-url", "events-url", "max-cycle-duration")
	return cmd
}

// splitErrors flattens joined errors into one message per problem.
func splitErrors(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, splitErrors(e)...)
		}
		return out
	}
	return []string{err.Error()}
}
