// robfig_next: robfig/cron v3's ParseStandard and SpecSchedule.Next, the calls the Kubernetes CronJob
// controller makes, behind a line protocol for calsim's tests (tests/oracles/robfig.py builds and runs it).
//
// Each input line is a JSON request; each answer is one JSON line:
//
//	{"spec": "0 0 * * *", "zone": "Europe/Berlin", "after": [<unix seconds>, ...], "n": 3}
//	  -> {"next": [[t1, t2, t3], ...]}   n chained Next() calls from each "after" (0: the zero time)
//	{"spec": "...", "zone": "..."}         (no "after")
//	  -> {"ok": true} or {"error": "<robfig's message>"}
//
// Zones load from $ZONEINFO (a zoneinfo directory), so the tests pin the tz release.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/robfig/cron/v3"
)

type request struct {
	Spec  string  `json:"spec"`
	Zone  string  `json:"zone"`
	After []int64 `json:"after"`
	N     int     `json:"n"`
}

type answer struct {
	OK    bool      `json:"ok,omitempty"`
	Error string    `json:"error,omitempty"`
	Next  [][]int64 `json:"next,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	locations := map[string]*time.Location{}
	for in.Scan() {
		var req request
		var ans answer
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			ans.Error = "bad request: " + err.Error()
		} else {
			ans = serve(req, locations)
		}
		line, _ := json.Marshal(ans)
		out.Write(line)
		out.WriteByte('\n')
		out.Flush()
	}
}

func serve(req request, locations map[string]*time.Location) (ans answer) {
	defer func() {
		if r := recover(); r != nil {
			ans = answer{Error: fmt.Sprint("panic: ", r)}
		}
	}()
	loc, ok := locations[req.Zone]
	if !ok {
		var err error
		if loc, err = time.LoadLocation(req.Zone); err != nil {
			return answer{Error: "zone: " + err.Error()}
		}
		locations[req.Zone] = loc
	}
	// As the controller does (pkg/controller/cronjob/utils.go formatSchedule): "TZ=<zone> " + spec.
	sched, err := cron.ParseStandard("TZ=" + req.Zone + " " + req.Spec)
	if err != nil {
		return answer{Error: err.Error()}
	}
	if req.After == nil {
		return answer{OK: true}
	}
	ans.Next = make([][]int64, len(req.After))
	for i, after := range req.After {
		t := time.Unix(after, 0).In(loc)
		chain := make([]int64, 0, req.N)
		for k := 0; k < req.N; k++ {
			t = sched.Next(t)
			if t.IsZero() {
				chain = append(chain, 0)
				break
			}
			chain = append(chain, t.Unix())
		}
		ans.Next[i] = chain
	}
	return ans
}
