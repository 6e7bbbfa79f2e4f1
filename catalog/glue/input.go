package glue

import (
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/glue/types"
)

// InputOf is the TableInput that writes t back unchanged: a deep copy of
// every field TableInput has (UpdateTable replaces the whole record, so a
// field left out is a field cleared). The server-owned fields of a Table
// (DatabaseName, CreateTime, UpdateTime, CreatedBy, VersionId, CatalogId,
// IsRegisteredWithLakeFormation, …) have no TableInput field and are not
// sent. TestInputOfCopiesEveryField fails when an SDK update adds a field.
func InputOf(t *types.Table) *types.TableInput {
	return &types.TableInput{
		Name:              t.Name,
		Description:       t.Description,
		FederatedTable:    cloneFederated(t.FederatedTable),
		LastAccessTime:    t.LastAccessTime,
		LastAnalyzedTime:  t.LastAnalyzedTime,
		Owner:             t.Owner,
		Parameters:        maps.Clone(t.Parameters),
		PartitionKeys:     cloneColumns(t.PartitionKeys),
		Retention:         t.Retention,
		StorageDescriptor: cloneSD(t.StorageDescriptor),
		TableType:         t.TableType,
		TargetTable:       cloneTarget(t.TargetTable),
		ViewDefinition:    viewInput(t.ViewDefinition),
		ViewExpandedText:  t.ViewExpandedText,
		ViewOriginalText:  t.ViewOriginalText,
	}
}

func cloneColumns(cols []types.Column) []types.Column {
	if cols == nil {
		return nil
	}
	out := make([]types.Column, len(cols))
	for i, c := range cols {
		c.Parameters = maps.Clone(c.Parameters)
		out[i] = c
	}
	return out
}

func cloneSD(sd *types.StorageDescriptor) *types.StorageDescriptor {
	if sd == nil {
		return nil
	}
	n := *sd
	n.AdditionalLocations = slices.Clone(sd.AdditionalLocations)
	n.BucketColumns = slices.Clone(sd.BucketColumns)
	n.Columns = cloneColumns(sd.Columns)
	n.Parameters = maps.Clone(sd.Parameters)
	n.SortColumns = slices.Clone(sd.SortColumns)
	if sd.SerdeInfo != nil {
		si := *sd.SerdeInfo
		si.Parameters = maps.Clone(sd.SerdeInfo.Parameters)
		n.SerdeInfo = &si
	}
	if sd.SkewedInfo != nil {
		sk := *sd.SkewedInfo
		sk.SkewedColumnNames = slices.Clone(sd.SkewedInfo.SkewedColumnNames)
		sk.SkewedColumnValues = slices.Clone(sd.SkewedInfo.SkewedColumnValues)
		sk.SkewedColumnValueLocationMaps = maps.Clone(sd.SkewedInfo.SkewedColumnValueLocationMaps)
		n.SkewedInfo = &sk
	}
	if sd.SchemaReference != nil {
		sr := *sd.SchemaReference
		if sd.SchemaReference.SchemaId != nil {
			id := *sd.SchemaReference.SchemaId
			sr.SchemaId = &id
		}
		n.SchemaReference = &sr
	}
	return &n
}

func cloneFederated(f *types.FederatedTable) *types.FederatedTable {
	if f == nil {
		return nil
	}
	n := *f
	return &n
}

func cloneTarget(t *types.TableIdentifier) *types.TableIdentifier {
	if t == nil {
		return nil
	}
	n := *t
	return &n
}

// viewInput carries a view's definition back as its input form; IsStale
// is the server's and has no input field.
func viewInput(v *types.ViewDefinition) *types.ViewDefinitionInput {
	if v == nil {
		return nil
	}
	in := &types.ViewDefinitionInput{
		Definer:              v.Definer,
		IsManaged:            v.IsManaged,
		IsProtected:          v.IsProtected,
		LastRefreshType:      v.LastRefreshType,
		RefreshSeconds:       v.RefreshSeconds,
		SparkPipelineInfo:    maps.Clone(v.SparkPipelineInfo),
		SubObjectVersionIds:  slices.Clone(v.SubObjectVersionIds),
		SubObjects:           slices.Clone(v.SubObjects),
		SubObjectsStatistics: slices.Clone(v.SubObjectsStatistics),
		ViewVersionId:        v.ViewVersionId,
		ViewVersionToken:     v.ViewVersionToken,
	}
	for _, r := range v.Representations {
		in.Representations = append(in.Representations, types.ViewRepresentationInput{
			Dialect: r.Dialect, DialectVersion: r.DialectVersion, ValidationConnection: r.ValidationConnection,
			ViewExpandedText: r.ViewExpandedText, ViewOriginalText: r.ViewOriginalText,
		})
	}
	return in
}
