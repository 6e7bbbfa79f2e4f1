package uc

import (
	"strings"

	"github.com/deltasync/deltasync/catalog"
)

// CredentialDenialError is a refusal to vend credentials whose server
// message Databricks uses for a missing grant or setting; Hint says which
// one and how to give it. It wraps the *APIError.
type CredentialDenialError struct {
	Table string
	Hint  string
	Err   error
}

func (e *CredentialDenialError) Error() string { return e.Err.Error() + " (" + e.Hint + ")" }

// Unwrap returns the server's error.
func (e *CredentialDenialError) Unwrap() error { return e.Err }

// explainDenial adds a hint to a credential-vending error when the server
// names the Databricks grant or setting that is missing (what the
// messages mean is Databricks' documentation of credential vending for
// external engines):
//   - EXTERNAL_GENERATE_TABLE_CREDENTIALS_DENIED, or "External data access"
//     in the message: the metastore does not allow external engines;
//   - EXTERNAL USE SCHEMA in the message: the principal lacks that
//     privilege on the table's schema.
//
// Anything else is returned as it is.
func explainDenial(err error, table string) error {
	e, ok := asAPIError(err)
	if !ok {
		return err
	}
	text := e.Type + " " + e.Message
	schema := table
	if n, perr := catalog.ParseTableName(table); perr == nil {
		schema = n.Catalog + "." + n.Schema
	}
	var hint string
	switch {
	case strings.Contains(text, "EXTERNAL USE SCHEMA"):
		hint = "the principal lacks EXTERNAL USE SCHEMA on schema " + schema + ": a schema owner can run " +
			"GRANT EXTERNAL USE SCHEMA ON SCHEMA " + schema + " TO <principal>; or set credentials: ambient"
	case strings.Contains(text, "EXTERNAL_GENERATE_TABLE_CREDENTIALS_DENIED") || strings.Contains(strings.ToLower(text), "external data access"):
		hint = "the metastore does not vend credentials to external engines: a metastore admin must turn on " +
			"External data access (Catalog Explorer, metastore details), and the principal needs EXTERNAL USE SCHEMA " +
			"on schema " + schema + "; or set credentials: ambient"
	default:
		return err
	}
	return &CredentialDenialError{Table: table, Hint: hint, Err: err}
}
