package main

import (
	"os"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
)

// validate is cli.settings for the tests that only check a configuration's
// problems (token_env read from the test process's environment).
func (c *config) validate() error {
	_, err := (&cli{env: envMap(os.Environ())}).settings(*c)
	return err
}

// validateTables is the tables section of cli.settings alone.
func (c *config) validateTables() problems {
	s := settings{cfg: *c}
	var p problems
	s.buildTables(&p, selectFromConfig)
	return p
}

// kindOf is Unity Catalog's kind over c, as newParts builds it.
func kindOf(c *uc.Client) catalog.Kind { return uc.NewKind(c, uc.KindOptions{}) }
