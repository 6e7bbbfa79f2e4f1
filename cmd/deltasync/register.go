package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/register"
)

// registerConfig is the `register:` section: rules that make deltasync
// create the catalog record of each Delta table it finds in storage under
// a location template (register.Options). Opt-in: with no rule nothing
// is ever created.
type registerConfig struct {
	Rules []registerRule `json:"rules"`
	// Interval is how often discovery re-lists the templates (plan and
	// once always discover).
	Interval *duration `json:"interval"`
	// MaxPerCycle bounds the creations of one cycle; the rest wait.
	MaxPerCycle *int `json:"max_per_cycle"`
	// CreateSchemas creates a missing schema instead of flagging its tables.
	CreateSchemas bool `json:"create_schemas"`
}

type registerRule struct {
	Location string `json:"location"`
	Name     string `json:"name"`
}

// The defaults of register's keys.
const (
	defaultRegisterInterval    = 10 * time.Minute
	defaultRegisterMaxPerCycle = 100
)

// fill sets the keys left out to their defaults (a nil section stays nil).
func (r *registerConfig) fill() {
	if r == nil {
		return
	}
	if r.Interval == nil {
		d := duration(defaultRegisterInterval)
		r.Interval = &d
	}
	if r.MaxPerCycle == nil {
		n := defaultRegisterMaxPerCycle
		r.MaxPerCycle = &n
	}
}

// options are the sync options of the section (nil without rules).
func (r *registerConfig) options() *register.Options {
	if r == nil || len(r.Rules) == 0 {
		return nil
	}
	r.fill()
	o := &register.Options{Interval: time.Duration(*r.Interval), MaxPerCycle: *r.MaxPerCycle, CreateSchemas: r.CreateSchemas}
	for _, rule := range r.Rules {
		o.Rules = append(o.Rules, register.Rule{Location: rule.Location, Name: rule.Name})
	}
	return o
}

// buildRegister checks the register section and sets the reconcile's
// register.Options (nil without rules). Each problem is named by its key:
// register.rules[i].location, register.rules[i].name, register.interval,
// register.max_per_cycle. A template outside storage.allowed_locations is
// one of them.
func (s *settings) buildRegister(p *problems) {
	r := s.cfg.Register
	if r == nil {
		return
	}
	r.fill()
	if *r.Interval < 0 {
		p.add("register.interval: must not be negative (0: every cycle)")
	}
	if *r.MaxPerCycle < 0 {
		p.add("register.max_per_cycle: must not be negative (0: no bound)")
	}
	complete := true
	for i, rule := range r.Rules {
		if strings.TrimSpace(rule.Location) == "" {
			p.add("register.rules[%d].location: required", i)
			complete = false
		}
		if strings.TrimSpace(rule.Name) == "" {
			p.add("register.rules[%d].name: required (catalog.schema.table, e.g. main.{schema}.{table})", i)
			complete = false
		}
	}
	o := r.options()
	s.reconcile.Register = o
	policy := s.reconcile.Storage
	if !complete || policy == nil || o == nil { // a bad policy is reported under storage.allowed_locations
		return
	}
	checked := *o
	checked.MaxPerCycle = max(o.MaxPerCycle, 0) // reported above
	p.addNamed(sync.CheckRegisterOptions(&checked, policy), registerKey)
}

// registerKey names a template sync refused by its config key
// (register.rules[i].location, register.rules[i].name); other errors pass.
func registerKey(e error) error {
	var te *register.TemplateError
	if !errors.As(e, &te) {
		return e
	}
	return fmt.Errorf("register.rules[%d].%s: %w", te.Rule, strings.ToLower(te.Field), te.Err)
}
