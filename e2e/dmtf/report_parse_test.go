package dmtf

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseReports reads excerpts of each validator's real report (the
// versions in ../shared/third_party/dmtf) with a FAIL planted where the
// tool writes one, and checks that the FAIL is found where it is, that a
// tool limitation is told apart, and that passes are counted: a report
// format the parser misreads would let every FAIL through.
func TestParseReports(t *testing.T) {
	t.Run("service", func(t *testing.T) {
		log := `2026-12-05 00:23:25,308 - redfish - INFO -   - Pass: 19, Warn: 0, Fail: 0, Skip: 73
2026-12-05 00:23:25,308 - redfish - INFO - Validating /redfish/v1/Systems/demo.vm-0...
2026-12-05 00:23:25,308 - redfish - INFO - PASS - /@odata.etag (W/"efbfb93403d4fd33"): Pass: The property is valid.
2026-12-05 00:23:25,309 - redfish - INFO - PASS - /@odata.id (/redfish/v1/Systems/demo.vm-0): Pass: The property is valid.
2026-12-05 00:23:25,363 - redfish - WARNING - WARN - /MemorySummary/Status ([Object]): Deprecated Property Warning: The property is deprecated.
2026-12-05 00:23:25,364 - redfish - ERROR - FAIL - /PowerState (Of): Invalid Enum Error: The value is not one of the enumeration values.
2026-12-05 00:23:25,308 - redfish - INFO - SKIP - /Oem ([Not Present]): Skip: The property is not present.
2026-12-05 00:23:25,308 - redfish - INFO - Validating /redfish/v1/Chassis...
2026-12-05 00:23:25,309 - redfish - INFO - PASS - /Name (Chassis Collection): Pass: The property is valid.
`
		got, err := parseService(strings.NewReader(log))
		if err != nil {
			t.Fatal(err)
		}
		want := report{
			Fails:    []finding{{"/redfish/v1/Systems/demo.vm-0", "/PowerState (Of): Invalid Enum Error: The value is not one of the enumeration values."}},
			Warnings: []finding{{"/redfish/v1/Systems/demo.vm-0", "/MemorySummary/Status ([Object]): Deprecated Property Warning: The property is deprecated."}},
			Passed:   3,
			Reached:  []string{"/redfish/v1/Systems/demo.vm-0", "/redfish/v1/Chassis"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("interop", func(t *testing.T) {
		log := `INFO - *** /redfish/v1/Systems/demo.vm-0/Bios, Bios
INFO - 	 Type (#Bios.v1_2_3.Bios), GET SUCCESS (time: 0.001412)
ERROR - Supported Values Error: Property 'SupportedApplyTimes#0' does not support all required values. ...  
INFO - *** /redfish/v1/Systems/demo.vm-0, ComputerSystem
Listing any warnings and errors: 
INFO -  
INFO - /redfish/v1/Systems/demo.vm-0
INFO - Warnings
WARNING - WriteableProperties Warning: Unable to test writeable property, no @Redfish.WriteableProperties available at the property level Mandatory ...  
INFO - Errors
ERROR - Mandatory Error: Property 'PowerState' does not exist ...  
INFO -  
INFO - /redfish/v1/Systems/demo.vm-0/Bios
INFO - Errors
ERROR - Supported Values Error: Property 'SupportedApplyTimes#0' does not support all required values. ...  
`
		stdout := "+------------+-------+\n| Pass       |   440 |\n| Fail       |     2 |\n"
		got, err := parseInterop(strings.NewReader(log), stdout)
		if err != nil {
			t.Fatal(err)
		}
		want := report{
			Fails: []finding{
				{"/redfish/v1/Systems/demo.vm-0", "Mandatory Error: Property 'PowerState' does not exist"},
				{"/redfish/v1/Systems/demo.vm-0/Bios", "Supported Values Error: Property 'SupportedApplyTimes#0' does not support all required values."},
			},
			Warnings: []finding{{"/redfish/v1/Systems/demo.vm-0", "WriteableProperties Warning: Unable to test writeable property, no @Redfish.WriteableProperties available at the property level Mandatory"}},
			Passed:   440,
			Reached:  []string{"/redfish/v1/Systems/demo.vm-0/Bios", "/redfish/v1/Systems/demo.vm-0"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if limitation("interop", got.Fails[0]) || !limitation("interop", got.Fails[1]) {
			t.Errorf("limitations: %v %v, want false (a service defect) true (README.md)", limitation("interop", got.Fails[0]), limitation("interop", got.Fails[1]))
		}
	})
	t.Run("protocol", func(t *testing.T) {
		tsv := "Assertion\tMethod\tStatus code\tURI\tResult\tMessage\tRequirement\n" +
			"PROTO_ETAG_RFC7232\tGET\t200\t/redfish/v1\tPASS\tTest passed\tETags: ...\n" +
			"REQ_QUERY_UNSUPPORTED_DOLLAR_PARAMS\tGET\t200\t/redfish/v1/?$rpvunknown\tFAIL\tGET request with unknown query parameter that starts with $ returned status 200; expected status 501\tQuery ...\n" +
			"SEC_ACCOUNTS\t\t\t\tNOT_TESTED\tNo empty account slot\t...\n"
		got, err := parseProtocol(strings.NewReader(tsv))
		if err != nil {
			t.Fatal(err)
		}
		want := report{
			Fails:      []finding{{"GET /redfish/v1/?$rpvunknown (200)", "REQ_QUERY_UNSUPPORTED_DOLLAR_PARAMS: GET request with unknown query parameter that starts with $ returned status 200; expected status 501"}},
			Passed:     1,
			Reached:    []string{"/redfish/v1"},
			Assertions: []string{"PROTO_ETAG_RFC7232"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if _, err := parseProtocol(strings.NewReader("")); err == nil {
			t.Error("an empty report parsed")
		}
	})
}
