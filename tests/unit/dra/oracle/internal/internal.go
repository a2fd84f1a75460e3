// Package internal stands in for k8s.io/dynamic-resource-allocation/structured/internal so
// that upstream's allocator test table (allocatortesting, copied by copy_upstream.py with this
// import and one line that names the running case) can drive the public allocator.
package internal

import (
	"context"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/structured"
)

type DeviceClassLister = structured.DeviceClassLister
type Features = structured.Features
type DeviceID = structured.DeviceID
type SharedDeviceID = structured.SharedDeviceID
type ConsumedCapacityCollection = structured.ConsumedCapacityCollection
type ConsumedCapacity = structured.ConsumedCapacity
type AllocatedState = structured.AllocatedState

type AllocatorChannel string

const (
	Experimental = "experimental"
	Stable       = "stable"
	Incubating   = "incubating"
)

type Stats struct {
	NumAllocateOneInvocations int64
}

type Allocator interface {
	Allocate(ctx context.Context, node *v1.Node, claims []*resourceapi.ResourceClaim) ([]resourceapi.AllocationResult, error)
	Channel() AllocatorChannel
}

type AllocatorExtended interface {
	GetStats() Stats
}

func MakeDeviceID(driver, pool, device string) DeviceID {
	return structured.MakeDeviceID(driver, pool, device)
}

func MakeSharedDeviceID(deviceID DeviceID, shareID *types.UID) SharedDeviceID {
	return structured.MakeSharedDeviceID(deviceID, shareID)
}
