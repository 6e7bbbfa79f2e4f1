package catalog

import (
	"encoding/pem"
	"net/http/httptest"
)

// pemCert returns the test server's certificate in PEM form.
func pemCert(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}
