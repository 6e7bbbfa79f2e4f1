package main

import (
	"net/url"
	"strings"
	"time"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/sync/metrics"
)

// hmsSettings are catalog: for a Hive Metastore (catalog.url thrift://).
type hmsSettings struct {
	url     string
	name    string
	columns hms.Columns
	timeout time.Duration
}

// buildHMS reads catalog: when its url is thrift:// and reports whether it
// did (false: Unity Catalog's section, buildCatalog's). A Hive Metastore
// takes no sign-in (no SASL/Kerberos: unframed binary Thrift), so the
// token and TLS keys are errors here, not ignored.
func (s *settings) buildHMS(p *problems) bool {
	cc := s.cfg.Catalog
	u, err := url.Parse(cc.URL)
	if err != nil || u.Scheme != "thrift" {
		if cc.Name != "" {
			p.add("catalog.name: only for a Hive Metastore (catalog.url thrift://host:9083) or AWS Glue (glue://REGION); Unity Catalog's tables are named by their own catalogs")
		}
		if cc.Columns != "" {
			p.add("catalog.columns: only for a Hive Metastore (catalog.url thrift://host:9083)")
		}
		return false
	}
	h := &hmsSettings{url: cc.URL, name: cc.Name, timeout: time.Duration(cc.Timeout)}
	if _, err := hms.New(cc.URL, hms.Options{}); err != nil {
		p.add("catalog.url %q: want thrift://host:port", cc.URL)
	}
	if h.name == "" {
		h.name = hms.DefaultKindName
	} else if strings.ContainsAny(h.name, ".*?[] ") {
		p.add("catalog.name %q: want a plain name (it is the first part of catalog.db.table)", h.name)
	}
	switch cc.Columns {
	case "", "placeholder":
		h.columns = hms.ColumnsPlaceholder
	case "real":
		h.columns = hms.ColumnsReal
	default:
		p.add("catalog.columns %q: want placeholder or real", cc.Columns)
	}
	for key, set := range map[string]bool{
		"token_file": cc.TokenFile != "", "token_env": cc.TokenEnv != "", "oauth": cc.OAuth != nil,
		"ca_file": cc.CAFile != "", "insecure_skip_verify": cc.InsecureSkipVerify, "max_rps": cc.MaxRPS != 0,
	} {
		if set {
			p.add("catalog.%s: Unity Catalog's; a Hive Metastore (catalog.url thrift://) takes none", key)
		}
	}
	if cc.Timeout <= 0 {
		p.add("catalog.timeout: must be positive")
	}
	s.hms = h
	s.catalogURL = cc.URL
	return true
}

// checkHMS reports the settings a Hive Metastore cannot serve: vended
// credentials (it vends none).
func (s *settings) checkHMS(p *problems) {
	if s.hms == nil {
		return
	}
	if s.reconcile.VendedCredentials {
		p.add("credentials: vended: a Hive Metastore vends no credentials; use ambient (the process's own)")
	}
}

// client is the metastore client, every call counted in the catalog
// request metrics (operation = the Thrift call).
func (h *hmsSettings) client(m *metrics.Metrics) (*hms.Client, error) {
	return hms.New(h.url, hms.Options{Timeout: h.timeout, Observer: m.ObserveMetastore})
}

// kind is the Hive Metastore kind over c (ignore: diff.ignore_properties,
// which a write keeps as stored).
func (h *hmsSettings) kind(c *hms.Client, ignore []string) *hms.Kind {
	return hms.NewKind(c, hms.KindOptions{Name: h.name, Columns: h.columns, IgnoreProperties: ignore})
}
