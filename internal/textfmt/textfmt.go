// Package textfmt holds the small wording rules shared by every text
// deltasync shows people (the plan/once report, the status page), so they
// read the same everywhere.
package textfmt

// Dash stands for a value that is not known (a table type, a mode, a
// version not read yet).
const Dash = "—"

// OrDash returns s, or Dash when s is empty.
func OrDash(s string) string {
	if s == "" {
		return Dash
	}
	return s
}
