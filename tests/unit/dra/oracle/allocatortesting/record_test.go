package allocatortesting

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"

	"oracle/internal"
)

// The features the incubating allocator (kube-scheduler 1.36's default) supports.
var incubating = Features{
	AdminAccess: true, PrioritizedList: true, PartitionableDevices: true, DeviceTaints: true,
	DeviceBindingAndStatus: true, ConsumableCapacity: true,
}

type capacityEntry struct {
	Device   string                               `json:"device"`
	Capacity map[resourceapi.QualifiedName]string `json:"capacity"`
}

type record struct {
	Name            string                         `json:"name"`
	Features        Features                       `json:"features"`
	Allocated       []string                       `json:"allocated"`
	AllocatedShared []string                       `json:"allocatedShared"`
	AggregatedCap   []capacityEntry                `json:"aggregatedCapacity"`
	Classes         []*resourceapi.DeviceClass     `json:"classes"`
	Slices          []*resourceapi.ResourceSlice   `json:"slices"`
	Node            *v1.Node                       `json:"node"`
	Claims          []*resourceapi.ResourceClaim   `json:"claims"`
	Error           string                         `json:"error,omitempty"`
	NodeError       bool                           `json:"nodeError,omitempty"`
	Allocations     []resourceapi.AllocationResult `json:"allocations"`
}

var records []record

type recorder struct {
	inner   structured.Allocator
	partial record
}

func (r *recorder) Channel() internal.AllocatorChannel { return internal.Incubating }

func (r *recorder) Allocate(ctx context.Context, node *v1.Node, claims []*resourceapi.ResourceClaim) ([]resourceapi.AllocationResult, error) {
	results, err := r.inner.Allocate(ctx, node, claims)
	rec := r.partial
	rec.Node, rec.Claims = node, claims
	if err != nil {
		rec.Error = err.Error()
		rec.NodeError = errors.Is(err, structured.ErrFailedAllocationOnNode)
	}
	rec.Allocations = results
	if ctx.Err() == nil {
		records = append(records, rec)
	}
	return results, err
}

func TestRecord(t *testing.T) {
	structured.EnableAllocators(internal.Incubating)
	TestAllocator(t, incubating, func(ctx context.Context, features Features, state AllocatedState,
		classes DeviceClassLister, slices []*resourceapi.ResourceSlice, celCache *cel.Cache) (Allocator, error) {
		inner, err := structured.NewAllocator(ctx, features, state, classes, slices, celCache)
		if err != nil {
			return nil, err
		}
		listed, _ := classes.List()
		rec := record{Name: RecordName, Features: features, Classes: listed, Slices: slices}
		for id := range state.AllocatedDevices {
			rec.Allocated = append(rec.Allocated, id.String())
		}
		for id := range state.AllocatedSharedDeviceIDs {
			rec.AllocatedShared = append(rec.AllocatedShared, id.String())
		}
		for id, cap := range state.AggregatedCapacity {
			entry := capacityEntry{Device: id.String(), Capacity: map[resourceapi.QualifiedName]string{}}
			for name, q := range cap {
				entry.Capacity[name] = q.String()
			}
			rec.AggregatedCap = append(rec.AggregatedCap, entry)
		}
		sort.Strings(rec.Allocated)
		sort.Strings(rec.AllocatedShared)
		return &recorder{inner: inner, partial: rec}, nil
	})
	sort.SliceStable(records, func(i, j int) bool { return records[i].Name < records[j].Name })
	encoded, err := json.MarshalIndent(records, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("ORACLE_OUT"); out != "" {
		if err := os.WriteFile(out, append(encoded, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
