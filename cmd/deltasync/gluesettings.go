package main

import (
	"context"
	"errors"
	"github.com/deltasync/deltasync/sync/metrics"
	"net/url"
	"strings"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/glue"
)

// glueSettings are catalog: for the AWS Glue Data Catalog (catalog.url
// glue://REGION?…).
type glueSettings struct {
	url  string
	name string
	cfg  glue.Config
}

// buildGlue reads catalog: when its url is glue:// and reports whether it
// did (false: another kind's section). Everything about the catalog is
// in the URL (region, catalog_id, endpoint, archive, max_attempts:
// glue.ParseURL); catalog.name names it and catalog.timeout bounds one
// attempt of a call. Credentials are the AWS SDK's default chain, so
// Unity Catalog's sign-in and TLS keys are errors here, as is the Hive
// Metastore's catalog.columns (a Glue record keeps the columns its shape
// has).
func (s *settings) buildGlue(p *problems) bool {
	cc := s.cfg.Catalog
	u, err := url.Parse(cc.URL)
	if err != nil || u.Scheme != "glue" {
		return false
	}
	g := &glueSettings{url: cc.URL, name: cc.Name}
	if g.cfg, err = glue.ParseURL(cc.URL); err != nil {
		p.add("catalog.url: %s", strings.TrimPrefix(err.Error(), "glue: "))
	}
	if g.name == "" {
		g.name = glue.DefaultKindName
	} else if strings.ContainsAny(g.name, ".*?[] ") {
		p.add("catalog.name %q: want a plain name (it is the first part of catalog.db.table)", g.name)
	}
	if cc.Columns != "" {
		p.add("catalog.columns: a Hive Metastore's; Glue keeps the columns each record's shape has (docs/kinds/glue.md)")
	}
	for key, set := range map[string]bool{
		"token_file": cc.TokenFile != "", "token_env": cc.TokenEnv != "", "oauth": cc.OAuth != nil,
		"ca_file": cc.CAFile != "", "insecure_skip_verify": cc.InsecureSkipVerify, "max_rps": cc.MaxRPS != 0,
	} {
		if set {
			p.add("catalog.%s: Unity Catalog's; Glue (catalog.url glue://) signs in with the AWS SDK's default credential chain and takes none", key)
		}
	}
	if cc.Timeout <= 0 {
		p.add("catalog.timeout: must be positive")
	}
	g.cfg.Timeout = time.Duration(cc.Timeout)
	s.glue = g
	s.catalogURL = cc.URL
	return true
}

// checkGlue reports the settings Glue cannot serve: vended credentials.
func (s *settings) checkGlue(p *problems) {
	if s.glue != nil && s.reconcile.VendedCredentials {
		p.add("credentials: vended: deltasync reads no vended credentials from Glue; use ambient (the process's own)")
	}
}

// client is the Glue client, every request (each attempt) counted in the
// catalog request metrics (operation = the Glue call, observeGlue).
func (g *glueSettings) client(ctx context.Context, m *metrics.Metrics) (*glue.Client, error) {
	cfg := g.cfg
	cfg.Observer = observeGlue(m)
	return glue.New(ctx, cfg)
}

// kind is the Glue kind over c (ignore: diff.ignore_properties, which a
// write keeps as stored).
func (g *glueSettings) kind(c *glue.Client, ignore []string) *glue.Kind {
	return glue.NewKind(c, glue.KindOptions{Name: g.name, IgnoreProperties: ignore})
}

// observeGlue maps a Glue request's answer to the catalog request
// metrics' status: Glue answers every client error 400, so the classes
// are told apart by code — a VersionId conflict 409, a missing entity
// 404, throttling 429 — and anything else keeps its HTTP status (0 for
// no answer).
func observeGlue(m *metrics.Metrics) func(op string, d time.Duration, err error) {
	return func(op string, d time.Duration, err error) {
		var (
			api smithy.APIError
			re  *awshttp.ResponseError
		)
		status := 200
		switch {
		case err == nil:
		case errors.Is(err, catalog.ErrConflict):
			status = 409
		case errors.Is(err, catalog.ErrNotFound):
			status = 404
		case errors.As(err, &api) && api.ErrorCode() == "ThrottlingException":
			status = 429
		case errors.As(err, &re):
			status = re.HTTPStatusCode()
		default:
			status = 0
		}
		m.ObserveCatalog(op, status, d, err)
	}
}
