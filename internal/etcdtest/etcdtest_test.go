package etcdtest

import (
	"context"
	"testing"
	"time"
)

func TestClusterSurvivesOneMemberAndTakesItBack(t *testing.T) {
	c := Start(t, 3)
	if len(c.Endpoints()) != 3 {
		t.Fatalf("endpoints %v", c.Endpoints())
	}
	c.Members[0].Kill()
	if c.Members[0].Running() {
		t.Fatal("killed member still running")
	}
	if err := c.WaitHealthy(30 * time.Second); err != nil {
		t.Fatalf("two of three: %v", err)
	}
	if err := c.Members[0].Restart(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(30 * time.Second); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if !c.Members[0].Healthy(ctx) {
		t.Fatal("restarted member not healthy")
	}
}
