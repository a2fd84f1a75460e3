// Command oracle runs upstream DRA code (k8s.io/dynamic-resource-allocation: v0.36.3 with
// go.mod, another version with go.v<version>.mod) on the cases in testdata/*.json and writes
// what it answered, which the Python tests then compare with byte for byte. The CEL cases are
// answered per minor (testdata/cel_golden_<minor>.json). Regenerate, from this directory, with:
//
//	python3 ../make_cel_cases.py
//	go run . ../testdata/cel_cases.json ../testdata/cel_golden_1.36.json
//	go run -modfile=go.v0.37.2.mod . ../testdata/cel_cases.json ../testdata/cel_golden_1.37.json
//	go run -modfile=go.v0.35.4.mod . ../testdata/cel_cases.json ../testdata/cel_golden_1.35.json
//	python3 ../make_alloc_cases.py && go run . ../testdata/alloc_cases.json ../testdata/alloc_golden.json
//	python3 copy_upstream.py && ORACLE_OUT=$PWD/../testdata/allocatortesting_golden.json go test ./allocatortesting -run TestRecord
//
// The last runs upstream's own allocator test table (allocatortesting, which copy_upstream.py
// copies from the pinned module in the Go module cache) against the public allocator and
// records every case with its answer.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

type celCase struct {
	Name                     string                                                    `json:"name"`
	Expression               string                                                    `json:"expression"`
	Driver                   string                                                    `json:"driver"`
	AllowMultipleAllocations *bool                                                     `json:"allowMultipleAllocations,omitempty"`
	Attributes               map[resourceapi.QualifiedName]resourceapi.DeviceAttribute `json:"attributes,omitempty"`
	Capacity                 map[resourceapi.QualifiedName]resourceapi.DeviceCapacity  `json:"capacity,omitempty"`
	ListTypeAttributes       bool                                                      `json:"listTypeAttributes,omitempty"`
}

type celOutcome struct {
	Name         string `json:"name"`
	CompileError string `json:"compileError,omitempty"`
	MatchError   string `json:"matchError,omitempty"`
	Match        bool   `json:"match"`
}

type allocCase struct {
	Name      string                       `json:"name"`
	Features  structured.Features          `json:"features"`
	Classes   []*resourceapi.DeviceClass   `json:"classes"`
	Slices    []*resourceapi.ResourceSlice `json:"slices"`
	Claims    []*resourceapi.ResourceClaim `json:"claims"`
	Allocated []string                     `json:"allocated,omitempty"`
	Node      *v1.Node                     `json:"node"`
}

type allocOutcome struct {
	Name        string                         `json:"name"`
	Error       string                         `json:"error,omitempty"`
	NodeError   bool                           `json:"nodeError,omitempty"`
	Allocations []resourceapi.AllocationResult `json:"allocations"`
}

type classLister []*resourceapi.DeviceClass

func (l classLister) List() ([]*resourceapi.DeviceClass, error) { return l, nil }
func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	for _, c := range l {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclass"), name)
}

func main() {
	data, err := os.ReadFile(os.Args[1])
	must(err)
	var probe []map[string]any
	must(json.Unmarshal(data, &probe))
	var out any
	if len(probe) > 0 && probe[0]["expression"] != nil {
		var cases []celCase
		must(json.Unmarshal(data, &cases))
		out = runCEL(cases)
	} else {
		var cases []allocCase
		must(json.Unmarshal(data, &cases))
		out = runAlloc(cases)
	}
	encoded, err := json.MarshalIndent(out, "", "  ")
	must(err)
	must(os.WriteFile(os.Args[2], append(encoded, '\n'), 0o644))
}

func runCEL(cases []celCase) []celOutcome {
	var outcomes []celOutcome
	for _, c := range cases {
		cache := cel.NewCache(10, celFeatures(c.ListTypeAttributes))
		result := cache.GetOrCompile(c.Expression)
		o := celOutcome{Name: c.Name}
		if result.Error != nil {
			o.CompileError = result.Error.Error()
		} else {
			match, _, err := result.DeviceMatches(context.Background(), cel.Device{
				Driver: c.Driver, AllowMultipleAllocations: c.AllowMultipleAllocations,
				Attributes: c.Attributes, Capacity: c.Capacity,
			})
			if err != nil {
				o.MatchError = err.Error()
			}
			o.Match = match
		}
		outcomes = append(outcomes, o)
	}
	return outcomes
}

// celFeatures turns on consumable capacity and, where the pinned version has the field (from
// v0.36), list-type attributes; by reflection so one source builds against every version.
func celFeatures(listTypeAttributes bool) cel.Features {
	features := cel.Features{EnableConsumableCapacity: true}
	if field := reflect.ValueOf(&features).Elem().FieldByName("EnableListTypeAttributes"); field.IsValid() {
		field.SetBool(listTypeAttributes)
	}
	return features
}

func runAlloc(cases []allocCase) []allocOutcome {
	var outcomes []allocOutcome
	for _, c := range cases {
		o := allocOutcome{Name: c.Name}
		state := structured.AllocatedState{
			AllocatedDevices:         sets.New[structured.DeviceID](),
			AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
			AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
		}
		for _, id := range c.Allocated {
			var d, p, n string
			_, err := fmt.Sscanf(id, "%s %s %s", &d, &p, &n)
			must(err)
			state.AllocatedDevices.Insert(structured.MakeDeviceID(d, p, n))
		}
		cache := cel.NewCache(10, cel.Features{EnableConsumableCapacity: c.Features.ConsumableCapacity})
		a, err := structured.NewAllocator(context.Background(), c.Features, state, classLister(c.Classes), c.Slices, cache)
		must(err)
		results, err := a.Allocate(context.Background(), c.Node, c.Claims)
		if err != nil {
			o.Error = err.Error()
			o.NodeError = errors.Is(err, structured.ErrFailedAllocationOnNode)
		}
		o.Allocations = results
		outcomes = append(outcomes, o)
	}
	return outcomes
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
