package main

import (
	"fmt"
	"io"

	"github.com/deltasync/deltasync/sync/audit"
)

// auditConfig is the config's audit section: where the audit trail of
// catalog writes goes.
type auditConfig struct {
	// File is the JSON-lines file ("-": stderr only).
	File string `json:"file,omitempty"`
	// MaxSizeMiB rotates the file past this size (default 100).
	MaxSizeMiB int64 `json:"max_size_mib,omitempty"`
	// MaxBackups is how many rotated files are kept (default 10).
	MaxBackups int `json:"max_backups,omitempty"`
	// Stderr also writes every record to stderr.
	Stderr bool `json:"stderr,omitempty"`
}

// buildAudit checks the audit section; the apps that write open it.
func (s *settings) buildAudit(p *problems) {
	a := s.cfg.Audit
	s.audit = a
	if a.MaxSizeMiB < 0 {
		p.add("audit.max_size_mib: must not be negative")
	}
	if a.MaxBackups < 0 {
		p.add("audit.max_backups: must not be negative")
	}
}

// open opens the audit trail the config names (nil for none).
func (a auditConfig) open(stderr io.Writer) (*audit.Writer, error) {
	opts := audit.Options{Path: a.File, MaxBytes: a.MaxSizeMiB << 20, Backups: a.MaxBackups}
	if a.File == "-" {
		opts.Path = ""
		opts.Stderr = stderr
	}
	if a.Stderr {
		opts.Stderr = stderr
	}
	w, err := audit.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("audit.file: %w", err)
	}
	return w, nil
}
