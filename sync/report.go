package sync

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deltasync/deltasync/internal/textfmt"
	"github.com/deltasync/deltasync/sync/plan"
	"github.com/deltasync/deltasync/sync/register"
)

// ReportFormatVersion is the format_version of the JSON report.
//
// Version 2 (change control): each table's diff lists its changes, each
// with its class (diff.changes[].class: destructive or non_destructive);
// a table may be held (held: destructive) with its held update's actions;
// tables carry the record's table_id and etag. The rule for what bumps it
// is in the README ("Formats and their versions").
const ReportFormatVersion = "2"

// Report is the outcome of one cycle.
type Report struct {
	Cycle    int64
	Started  time.Time
	Duration time.Duration
	DryRun   bool
	Results  []Result
	Skipped  []Skipped
	// Deferred are failing tables waiting out their backoff.
	Deferred []string
	// Err holds listing problems (the catalog could not be fully listed).
	Err error
	// Interrupted is set when cancellation stopped the cycle early.
	Interrupted bool
	// ReadOnly are the catalogs found without the Delta API: their tables
	// were read with the classic API and drift was flagged, never written.
	ReadOnly []string
	// Register is set when register rules are configured: the summary
	// then always counts the registrations.
	Register bool
}

// Count returns how many tables had the outcome.
func (r *Report) Count(o Outcome) int {
	n := 0
	for _, res := range r.Results {
		if res.Outcome == o {
			n++
		}
	}
	return n
}

// Failed reports whether any table failed or the listing failed.
func (r *Report) Failed() bool { return r.Err != nil || r.Count(OutcomeFailed) > 0 }

// Drift reports whether any reconciled table is not in sync.
func (r *Report) Drift() bool {
	for _, res := range r.Results {
		if res.Status != StatusSynced {
			return true
		}
	}
	return false
}

// SummaryCounts is a cycle's one summary: the one-line text summary and
// the JSON report's "summary" object are both rendered from it, so they
// always agree. In a dry run a table a sync would update counts as
// WouldUpdate only, never also as Flagged.
type SummaryCounts struct {
	Tables      int `json:"tables"`
	Unchanged   int `json:"unchanged"`
	WouldUpdate int `json:"would_update"`
	Synced      int `json:"synced"`
	Flagged     int `json:"flagged"`
	Failed      int `json:"failed"`
	Skipped     int `json:"skipped"`
	BackingOff  int `json:"backing_off"`
	// Refused counts the flagged tables whose update the catalog refused
	// (ErrorReason refused); the JSON summary has it only when non-zero.
	Refused int `json:"refused,omitempty"`
	// Registration (sync/register): tables registered, that a run would register
	// (or that wait for the next cycle), found recorded under another
	// name, and records whose location holds no Delta log.
	Registered        int `json:"registered,omitempty"`
	WouldRegister     int `json:"would_register,omitempty"`
	AlreadyRegistered int `json:"already_registered,omitempty"`
	Orphaned          int `json:"orphaned,omitempty"`
}

// Counts returns the cycle's summary counts.
func (r *Report) Counts() SummaryCounts {
	c := SummaryCounts{Tables: len(r.Results), Skipped: len(r.Skipped), BackingOff: len(r.Deferred)}
	for _, res := range r.Results {
		switch {
		case res.WouldUpdate:
			c.WouldUpdate++
		case res.Outcome == OutcomeRegistered:
			c.Registered++
		case res.Outcome == OutcomeWouldRegister:
			c.WouldRegister++
		case res.Outcome == OutcomeAlreadyRegistered:
			c.AlreadyRegistered++
		case res.Outcome == OutcomeOrphaned:
			c.Orphaned++
		case res.Outcome == OutcomeUnchanged:
			c.Unchanged++
		case res.Outcome == OutcomeSynced:
			c.Synced++
		case res.Outcome == OutcomeFlagged:
			c.Flagged++
			if res.ErrorReason == ReasonRefused {
				c.Refused++
			}
		case res.Outcome == OutcomeFailed:
			c.Failed++
		}
	}
	return c
}

// Summary is the one-line summary, e.g.
// "12 tables: 9 unchanged, 2 synced, 1 flagged, 0 failed in 1.2s"; a dry
// run says "2 would update" where a sync says "2 synced".
func (r *Report) Summary() string {
	c := r.Counts()
	middle := fmt.Sprintf("%d synced", c.Synced)
	if r.DryRun {
		middle = fmt.Sprintf("%d would update", c.WouldUpdate)
	}
	s := fmt.Sprintf("%d tables: %d unchanged, %s, %d flagged, %d failed in %s",
		c.Tables, c.Unchanged, middle, c.Flagged, c.Failed, r.Duration.Round(100*time.Millisecond))
	if c.Refused > 0 {
		s += fmt.Sprintf(", %d refused", c.Refused)
	}
	if r.Register || c.Registered+c.WouldRegister > 0 {
		if r.DryRun {
			s += fmt.Sprintf(", %d would register", c.WouldRegister)
		} else {
			s += fmt.Sprintf(", %d registered", c.Registered)
			if c.WouldRegister > 0 {
				s += fmt.Sprintf(", %d waiting to register", c.WouldRegister)
			}
		}
	}
	if c.AlreadyRegistered > 0 {
		s += fmt.Sprintf(", %d already registered elsewhere", c.AlreadyRegistered)
	}
	if c.Orphaned > 0 {
		s += fmt.Sprintf(", %d orphaned", c.Orphaned)
	}
	if c.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped", c.Skipped)
	}
	if c.BackingOff > 0 {
		s += fmt.Sprintf(", %d backing off", c.BackingOff)
	}
	if r.Err != nil {
		s += " (listing incomplete)"
	}
	if r.Interrupted {
		s += " (interrupted)"
	}
	if len(r.ReadOnly) > 0 {
		s += " (read-only: no Delta API)"
	}
	return s
}

// readOnlyLine says why a catalog's drift is flagged and never written.
func readOnlyLine(catalogName string) string {
	return fmt.Sprintf("catalog %s has no Delta API (getConfig answers 404): read-only, drift is flagged, never written", catalogName)
}

// OutcomeWouldUpdate is the outcome the JSON report gives a table a dry
// run found drift on that a sync would update (its Result has WouldUpdate
// set and Outcome flagged).
const OutcomeWouldUpdate Outcome = "would_update"

// jsonReport is the stable JSON shape (format_version "1").
type jsonReport struct {
	FormatVersion string    `json:"format_version"`
	DryRun        bool      `json:"dry_run"`
	Tables        []Result  `json:"tables"`
	Skipped       []Skipped `json:"skipped"`
	Deferred      []string  `json:"deferred,omitempty"`
	Errors        []string  `json:"errors,omitempty"`
	// ReadOnly are notes on catalogs without the Delta API (readOnlyLine).
	ReadOnly   []string       `json:"read_only,omitempty"`
	Summary    map[string]int `json:"summary"`
	DurationMs int64          `json:"duration_ms"`
}

// WriteJSON writes the report as one JSON document. Its summary holds the
// same counts as Summary: unchanged, would_update (dry run) or synced,
// flagged, failed, plus tables, skipped and backing_off.
func (r *Report) WriteJSON(w io.Writer) error {
	j := jsonReport{FormatVersion: ReportFormatVersion, DryRun: r.DryRun, Tables: slices.Clone(r.Results), Skipped: r.Skipped,
		Deferred: r.Deferred, DurationMs: r.Duration.Milliseconds()}
	if j.Tables == nil {
		j.Tables = []Result{}
	}
	for i := range j.Tables {
		if j.Tables[i].WouldUpdate {
			j.Tables[i].Outcome = OutcomeWouldUpdate
		}
	}
	if j.Skipped == nil {
		j.Skipped = []Skipped{}
	}
	c := r.Counts()
	j.Summary = map[string]int{"tables": c.Tables, string(OutcomeUnchanged): c.Unchanged, string(OutcomeFlagged): c.Flagged,
		string(OutcomeFailed): c.Failed, "skipped": c.Skipped, "backing_off": c.BackingOff}
	if c.Refused > 0 {
		j.Summary["refused"] = c.Refused
	}
	if r.Register || c.Registered+c.WouldRegister > 0 {
		j.Summary[string(OutcomeWouldRegister)] = c.WouldRegister
		if !r.DryRun {
			j.Summary[string(OutcomeRegistered)] = c.Registered
		}
	}
	if c.AlreadyRegistered > 0 {
		j.Summary[string(OutcomeAlreadyRegistered)] = c.AlreadyRegistered
	}
	if c.Orphaned > 0 {
		j.Summary[string(OutcomeOrphaned)] = c.Orphaned
	}
	if r.DryRun {
		j.Summary[string(OutcomeWouldUpdate)] = c.WouldUpdate
	} else {
		j.Summary[string(OutcomeSynced)] = c.Synced
	}
	if r.Err != nil {
		j.Errors = strings.Split(r.Err.Error(), "\n")
	}
	for _, c := range r.ReadOnly {
		j.ReadOnly = append(j.ReadOnly, readOnlyLine(c))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// WriteText writes the report for people, table by table.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, c := range r.ReadOnly {
		fmt.Fprintf(&b, "%s\n", readOnlyLine(c))
	}
	for _, res := range r.Results {
		head := string(res.Outcome)
		switch {
		case res.WouldUpdate:
			head = "would update"
		case res.Outcome == OutcomeUnchanged:
			head = "in sync"
		case res.Outcome == OutcomeWouldRegister:
			head = "would register"
		case res.Outcome == OutcomeAlreadyRegistered:
			head = "already registered"
		}
		fmt.Fprintf(&b, "%s (%s, %s): %s [%s]\n", res.Table, textfmt.OrDash(res.Type), res.Mode, head, res.Status)
		if res.Reason != "" && !res.WouldUpdate {
			fmt.Fprintf(&b, "  reason: %s\n", res.Reason)
		}
		if res.Plan != nil {
			writePlan(&b, res.Plan)
		}
		if res.Registration != nil && res.Outcome != OutcomeFailed {
			writeRegistration(&b, res.Registration)
		}
		if len(res.Actions) > 0 {
			switch {
			case res.Held != "":
				fmt.Fprintf(&b, "  held, not sent: %s\n", strings.Join(res.Actions, ", "))
			case res.WouldUpdate:
				fmt.Fprintf(&b, "  would send: %s\n", strings.Join(res.Actions, ", "))
			case res.NotApplied:
				fmt.Fprintf(&b, "  not applied (the update failed, see reason): %s\n", strings.Join(res.Actions, ", "))
			default:
				fmt.Fprintf(&b, "  sent: %s\n", strings.Join(res.Actions, ", "))
			}
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "%s: skipped: %s\n", s.Table, s.Reason)
	}
	for _, d := range r.Deferred {
		fmt.Fprintf(&b, "%s: backing off after failures\n", d)
	}
	if r.Err != nil {
		fmt.Fprintf(&b, "listing errors:\n  %s\n", strings.ReplaceAll(r.Err.Error(), "\n", "\n  "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writePlan renders each difference on its own line, then each change
// with its class.
func writePlan(b *strings.Builder, p *plan.Plan) {
	defer writeChanges(b, p)
	if p.Schema != nil {
		fmt.Fprintf(b, "  schema: %s\n", strings.Join(p.Schema.Details, "; "))
	}
	if p.Partitioning != nil {
		fmt.Fprintf(b, "  partitioning: catalog %v -> log %v\n", p.Partitioning.Catalog, p.Partitioning.Log)
	}
	if p.Clustering != nil {
		fmt.Fprintf(b, "  clustering: catalog %v -> log %v\n", p.Clustering.Catalog, p.Clustering.Log)
	}
	if p.Protocol != nil {
		cat := "none"
		if p.Protocol.Catalog != nil {
			cat = protocolString(p.Protocol.Catalog.MinReaderVersion, p.Protocol.Catalog.MinWriterVersion,
				p.Protocol.Catalog.ReaderFeatures, p.Protocol.Catalog.WriterFeatures)
		}
		fmt.Fprintf(b, "  protocol: catalog %s -> log %s\n", cat, protocolString(p.Protocol.Log.MinReaderVersion,
			p.Protocol.Log.MinWriterVersion, p.Protocol.Log.ReaderFeatures, p.Protocol.Log.WriterFeatures))
	}
	if pc := p.Properties; pc != nil {
		for _, k := range slices.Sorted(maps.Keys(pc.Set)) {
			if old, ok := pc.Catalog[k]; ok {
				fmt.Fprintf(b, "  property %s: %q -> %q\n", k, old, pc.Set[k])
			} else {
				fmt.Fprintf(b, "  property %s: add %q\n", k, pc.Set[k])
			}
		}
		for _, k := range pc.Remove {
			fmt.Fprintf(b, "  property %s: remove (was %q)\n", k, pc.Catalog[k])
		}
	}
	if p.Comment != nil {
		fmt.Fprintf(b, "  comment: %q -> %q\n", p.Comment.Catalog, p.Comment.Log)
	}
	if p.Location != nil {
		fmt.Fprintf(b, "  location: catalog %s, log read at %s\n", p.Location.Catalog, p.Location.Log)
	}
	if p.Uniform != nil {
		fmt.Fprintf(b, "  uniform: Iceberg pointer at %s, log at %d (read-only, never written)\n", formatVersion(p.Uniform.ConvertedVersion), p.Uniform.LogVersion)
	}
	if p.Version != nil {
		fmt.Fprintf(b, "  version: catalog %s -> log %d\n", formatVersion(p.Version.Catalog), p.Version.Log)
		if p.Version.Recreated != "" {
			fmt.Fprintf(b, "  %s\n", p.Version.Recreated)
		}
	}
	for _, u := range p.Unsupported {
		fmt.Fprintf(b, "  unsupported type: %s\n", u)
	}
	for _, pr := range p.Problems {
		fmt.Fprintf(b, "  problem: %s\n", pr)
	}
}

func protocolString(r, w int, rf, wf []string) string {
	s := fmt.Sprintf("%d/%d", r, w)
	feats := slices.Compact(slices.Sorted(slices.Values(append(append([]string{}, rf...), wf...))))
	if len(feats) > 0 {
		s += " [" + strings.Join(feats, ",") + "]"
	}
	return s
}

// formatVersion renders an optional version for text output.
func formatVersion(v *int64) string {
	if v == nil {
		return "none"
	}
	return strconv.FormatInt(*v, 10)
}

// writeRegistration renders what a registration creates.
func writeRegistration(b *strings.Builder, reg *register.Registration) {
	fmt.Fprintf(b, "  location: %s\n", reg.Location)
	if reg.CreateSchema {
		b.WriteString("  schema: created first (register.create_schemas)\n")
	}
	fmt.Fprintf(b, "  columns: %s\n", strings.Join(reg.Columns, ", "))
	if len(reg.Partitioning) > 0 {
		fmt.Fprintf(b, "  partitioned by: %s\n", strings.Join(reg.Partitioning, ", "))
	}
	if len(reg.Clustering) > 0 {
		cols := make([]string, len(reg.Clustering))
		for i, c := range reg.Clustering {
			cols[i] = strings.Join(c, ".")
		}
		fmt.Fprintf(b, "  clustered by: %s\n", strings.Join(cols, ", "))
	}
	fmt.Fprintf(b, "  protocol: %d/%d", reg.Protocol.MinReaderVersion, reg.Protocol.MinWriterVersion)
	if f := slices.Concat(reg.Protocol.ReaderFeatures, reg.Protocol.WriterFeatures); len(f) > 0 {
		slices.Sort(f)
		fmt.Fprintf(b, " (%s)", strings.Join(slices.Compact(f), ", "))
	}
	b.WriteString("\n")
	for _, k := range slices.Sorted(maps.Keys(reg.Properties)) {
		fmt.Fprintf(b, "  property %s = %s\n", k, reg.Properties[k])
	}
	if reg.Comment != "" {
		fmt.Fprintf(b, "  comment: %s\n", reg.Comment)
	}
}

// removedText is the value a removed field had in the catalog, for
// people: a property's or the comment's quoted, a column's or a column
// list's as its JSON.
func removedText(c plan.Change) string {
	if c.Kind == plan.KindProperties || c.Kind == plan.KindComment {
		return strconv.Quote(c.Catalog)
	}
	return c.Catalog
}

// writeChanges marks each change of the plan with its class:
// "  destructive: column price: remove".
func writeChanges(b *strings.Builder, p *plan.Plan) {
	for _, c := range p.Changes() {
		if c.Kind == plan.KindVersion || c.Kind == plan.KindLocation || c.Kind == plan.KindUniform {
			continue // told above; never a change control holds
		}
		class := "non-destructive"
		if c.Class == plan.ClassDestructive {
			class = "destructive"
		}
		line := fmt.Sprintf("%s: %s", c.Field, c.Op)
		if c.Op == plan.OpRemove {
			line += " (was " + removedText(c) + ")"
		}
		if len(c.Details) > 0 {
			line += " (" + strings.Join(c.Details, ", ") + ")"
		}
		fmt.Fprintf(b, "  %s: %s\n", class, line)
	}
}
