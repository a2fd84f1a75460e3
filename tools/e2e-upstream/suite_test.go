// The sig-scheduling end-to-end suite of the pinned Kubernetes release (test/e2e/scheduling),
// as test/e2e/e2e_test.go runs it but with only the scheduling specs registered: built by
// tools/build-binaries.sh (e2e-scheduling) with `go test -c`, run by `make e2e-upstream`.
package e2escheduling

import (
	"context"
	"flag"
	"os"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"k8s.io/component-base/logs"
	"k8s.io/component-base/version"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/framework/config"
	e2enode "k8s.io/kubernetes/test/e2e/framework/node"

	_ "k8s.io/kubernetes/test/e2e/scheduling"

	_ "k8s.io/kubernetes/test/e2e/framework/debug/init"
	_ "k8s.io/kubernetes/test/e2e/framework/metrics/init"
	_ "k8s.io/kubernetes/test/e2e/framework/node/init"
)

// The part of test/e2e's setupSuite the scheduling specs depend on: every node schedulable,
// and the number of nodes known.
var _ = ginkgo.SynchronizedBeforeSuite(func(ctx context.Context) []byte {
	c, err := framework.LoadClientset()
	framework.ExpectNoError(err, "Error loading client")
	timeouts := framework.NewTimeoutContext()
	framework.ExpectNoError(e2enode.WaitForAllNodesSchedulable(ctx, c, timeouts.NodeSchedulable))
	framework.Logf("e2e test version: %s", version.Get().GitVersion)
	return nil
}, func(ctx context.Context, data []byte) {
	if framework.TestContext.CloudConfig.NumNodes == framework.DefaultNumNodes {
		c, err := framework.LoadClientset()
		framework.ExpectNoError(err, "Error loading client")
		nodes, err := e2enode.GetReadySchedulableNodes(ctx, c)
		framework.ExpectNoError(err)
		framework.TestContext.CloudConfig.NumNodes = len(nodes.Items)
	}
})

func TestMain(m *testing.M) {
	config.CopyFlags(config.Flags, flag.CommandLine)
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

func TestE2E(t *testing.T) {
	logs.InitLogs()
	defer logs.FlushLogs()
	klog.EnableContextualLogging(true)
	gomega.RegisterFailHandler(framework.Fail)
	suiteConfig, reporterConfig := framework.CreateGinkgoConfig()
	ginkgo.RunSpecs(t, "Kubernetes sig-scheduling e2e suite", suiteConfig, reporterConfig)
}
