// Package spectest checks the in-memory Unity Catalog of package uctest
// against the API definitions (delta.yaml, all.yaml in ../shared/spec) with
// kin-openapi, and gives tests a server that does so by default.
//
// It is its own package so that only tests link kin-openapi and testing:
// the demo in the deltasync binary starts uctest.NewServer, which validates
// nothing. See package uctest for what is validated and how.
package spectest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/deltasync/deltasync/catalog/uctest"
)

// basePath is where both APIs live.
const basePath = "/api/2.1/unity-catalog"

// Spec holds the two API definitions, loaded and ready to validate; it is a
// uctest.Validator. Load it once with LoadSpec and share it between servers
// (WithSpec) when a test binary starts many servers.
type Spec struct {
	delta, classic *specDoc
}

type specDoc struct {
	doc    *openapi3.T
	router routers.Router
}

// LoadSpec loads delta.yaml (OpenAPI 3.1.1) and all.yaml (3.0) from dir.
//
// Workarounds, all deliberate:
//   - examples and defaults are not validated: the files have mistakes there
//     (e.g. ColumnInfo.nullable has the string default 'true');
//   - DeltaDataType is declared `type: object`, but primitive types travel as
//     bare JSON strings ("long"), as the schema's own description says; its
//     type is widened to [object, string] after loading;
//   - the servers are replaced by the relative URL /api/2.1/unity-catalog so
//     routing ignores host and port.
func LoadSpec(dir string) (*Spec, error) {
	d, err := loadSpecDoc(filepath.Join(dir, "delta.yaml"))
	if err != nil {
		return nil, err
	}
	if dt := d.doc.Components.Schemas["DeltaDataType"]; dt != nil && dt.Value != nil {
		dt.Value.Type = &openapi3.Types{openapi3.TypeObject, openapi3.TypeString}
	}
	c, err := loadSpecDoc(filepath.Join(dir, "all.yaml"))
	if err != nil {
		return nil, err
	}
	return &Spec{delta: d, classic: c}, nil
}

func loadSpecDoc(path string) (*specDoc, error) {
	doc, err := openapi3.NewLoader().LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("spectest: load API definition %s: %w", path, err)
	}
	ctx := context.Background()
	if err := doc.Validate(ctx, openapi3.DisableExamplesValidation(), openapi3.DisableSchemaDefaultsValidation()); err != nil {
		return nil, fmt.Errorf("spectest: API definition %s is invalid: %w", path, err)
	}
	doc.Servers = openapi3.Servers{{URL: basePath}}
	r, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("spectest: route API definition %s: %w", path, err)
	}
	return &specDoc{doc: doc, router: r}, nil
}

// DefaultSpecDir finds ../shared/spec beside the module root: it walks up
// from the working directory to the directory holding go.mod.
func DefaultSpecDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			spec := filepath.Join(dir, "..", "shared", "spec")
			if _, err := os.Stat(filepath.Join(spec, "delta.yaml")); err != nil {
				return "", fmt.Errorf("spectest: no API definitions at %s (module root %s; check out the shared reference material next to the repository): %w", spec, dir, err)
			}
			return spec, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("spectest: no go.mod above the working directory; pass WithSpecDir")
		}
		dir = parent
	}
}

// validation is one request's route plus its validation input, kept so the
// response can be validated against the same operation.
type validation struct {
	input *openapi3filter.RequestValidationInput
	doc   *specDoc
}

func validateOptions() *openapi3filter.Options {
	return &openapi3filter.Options{
		SkipSettingDefaults: true,
		MultiError:          true,
		AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc,
	}
}

// ValidateRequest checks r (whose body is body) against the definition its
// path belongs to; the check it returns validates the response.
func (s *Spec) ValidateRequest(r *http.Request, body []byte) (uctest.ResponseCheck, error) {
	v, err := s.validateRequest(r, body)
	if v == nil {
		return nil, err
	}
	return v.validateResponse, err
}

func (s *Spec) validateRequest(r *http.Request, body []byte) (*validation, error) {
	d := s.classic
	if strings.HasPrefix(r.URL.Path, basePath+"/delta/v1/") {
		d = s.delta
	}
	// Route on a copy: gorillamux matches the host against the server URL.
	rr := r.Clone(r.Context())
	rr.URL = &url.URL{Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	rr.Host = ""
	rr.Body = io.NopCloser(bytes.NewReader(body))
	route, params, err := d.router.FindRoute(rr)
	if err != nil {
		status := http.StatusNotFound
		if errors.Is(err, routers.ErrMethodNotAllowed) {
			status = http.StatusMethodNotAllowed
		}
		return nil, &uctest.NoRouteError{Status: status, Err: fmt.Errorf("%s %s is not in the API definition: %w", r.Method, r.URL.Path, err)}
	}
	in := &openapi3filter.RequestValidationInput{Request: rr, PathParams: params, Route: route, Options: validateOptions()}
	if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
		return &validation{input: in, doc: d}, err
	}
	if d == s.delta {
		if err := strictBody(d.doc, route.Operation, body); err != nil {
			return &validation{input: in, doc: d}, err
		}
	}
	return &validation{input: in, doc: d}, nil
}

// validateResponse checks a response produced for v's request.
func (v *validation) validateResponse(ctx context.Context, status int, header http.Header, body []byte) error {
	if v.input.Request.Method == http.MethodHead {
		return nil // HEAD answers carry no body; the 404 response's content cannot apply
	}
	if len(body) == 0 && v.input.Request.Method == http.MethodDelete && status == http.StatusOK {
		// Classic deletes declare `content: application/json, schema: {}`
		// but the server sends an empty body (§7.1); any body would match {}.
		return nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: v.input,
		Status:                 status,
		Header:                 header,
		Options:                validateOptions(),
	}
	in.SetBodyBytes(body)
	return openapi3filter.ValidateResponse(ctx, in)
}
