package glue

import (
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/google/go-cmp/cmp"
)

// fill sets every exported field of the struct v points to, recursively,
// to a non-zero value.
func fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.Type() == reflect.TypeFor[*time.Time]() {
			t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			v.Set(reflect.ValueOf(&t))
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth)
	case reflect.Struct:
		if depth > 4 {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), depth)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth)
		fill(e, depth)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(1.5)
	}
}

// TestInputOfCopiesEveryField: UpdateTable replaces the whole record, so
// every TableInput field must be carried from the Table read. The test
// fills every field of a Table and checks each TableInput field arrives
// set: a field an SDK update adds fails it until InputOf copies it.
func TestInputOfCopiesEveryField(t *testing.T) {
	var tb types.Table
	fill(reflect.ValueOf(&tb).Elem(), 0)
	in := reflect.ValueOf(InputOf(&tb)).Elem()
	for i := range in.NumField() {
		f := in.Type().Field(i)
		if f.IsExported() && in.Field(i).IsZero() {
			t.Errorf("InputOf leaves TableInput.%s unset although the Table has it", f.Name)
		}
	}
	sd := InputOf(&tb).StorageDescriptor
	if diff := cmp.Diff(tb.StorageDescriptor, sd, sdkTypes); diff != "" {
		t.Errorf("storage descriptor not copied whole (-read +input):\n%s", diff)
	}
	// A deep copy: editing the input leaves the Table as read.
	sd.SerdeInfo.Parameters["x"] = "changed"
	sd.Columns[0].Parameters["x"] = "changed"
	InputOf(&tb).Parameters["x"] = "changed"
	if tb.StorageDescriptor.SerdeInfo.Parameters["x"] == "changed" || tb.StorageDescriptor.Columns[0].Parameters["x"] == "changed" || tb.Parameters["x"] == "changed" {
		t.Error("InputOf shares maps with the Table it copies")
	}
}

// Unset stays unset: a record with no description, owner, storage
// descriptor or partition keys is written back without them.
func TestInputOfUnsetStaysUnset(t *testing.T) {
	in := InputOf(&types.Table{Name: new("t")})
	if diff := cmp.Diff(&types.TableInput{Name: new("t")}, in, sdkTypes); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
