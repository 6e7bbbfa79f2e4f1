package contract

import "testing"

// testDecimalPrecisionNull pins a UC 0.6.0 quirk users meet: a decimal
// column that arrives through the Delta API is stored without
// type_precision / type_scale (ColumnUtils.toColumnInfo leaves them out),
// whichever type shape carries it, at create and after set-columns.
func (h *harness) testDecimalPrecisionNull(t *testing.T) {
	md := h.createExternal(t, h.schema, "decimals") // amount decimal(10,2)
	check := func(what string) {
		t.Helper()
		r := h.do(t, "GET", "/tables/"+h.full(h.schema, "decimals"), nil).want(t, 200, "classic get")
		cols, _ := r.json["columns"].([]any)
		for _, c := range cols {
			c, _ := c.(map[string]any)
			if c["name"] != "amount" {
				continue
			}
			if c["type_text"] != "decimal(10,2)" || c["type_precision"] != nil || c["type_scale"] != nil {
				t.Errorf("%s: type_text %v type_precision %v type_scale %v, want decimal(10,2) with null precision and scale",
					what, c["type_text"], c["type_precision"], c["type_scale"])
			}
			return
		}
		t.Fatalf("%s: no amount column in %s", what, r.body)
	}
	check("createTable")
	withObject := columns()
	for _, f := range withObject["fields"].([]any) {
		if f := f.(map[string]any); f["name"] == "amount" {
			f["type"] = map[string]any{"type": "decimal", "precision": 10, "scale": 2}
		}
	}
	h.step(t, "decimals", md, act("set-columns", "columns", withObject))
	check("set-columns with the object form")
}
