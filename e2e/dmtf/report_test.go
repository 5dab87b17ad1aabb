package dmtf

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// A finding is one result a validator reported: where and what.
type finding struct {
	URI, Message string
}

func (f finding) String() string { return f.URI + ": " + f.Message }

// report is what one validator run found.
type report struct {
	// Fails are the FAIL results; Warnings the WARN ones (Interop).
	Fails, Warnings []finding
	// Passed counts the PASS results: a run that reached nothing passes
	// nothing.
	Passed int
	// Reached are the URIs the validator validated.
	Reached []string
	// Assertions are the assertions that passed (the Protocol
	// Validator's: SERV_EVENT_POST_RESP, ...).
	Assertions []string
}

// toolLimitations are the FAILs ../shared/third_party/dmtf/README.md lists
// as limitations of the tools, not defects of the service, by validator.
var toolLimitations = map[string][]*regexp.Regexp{
	// An array property with a required value list always FAILs: the tool
	// looks for Prop#0@Redfish.AllowableValues.
	"interop": {regexp.MustCompile(`^Supported Values Error: Property 'SupportedApplyTimes#0' does not support all required values`)},
}

// limitation reports whether f is one of tool's [toolLimitations].
func limitation(tool string, f finding) bool {
	for _, re := range toolLimitations[tool] {
		if re.MatchString(f.Message) {
			return true
		}
	}
	return false
}

var (
	// serviceValidating starts a resource in the Service Validator's log.
	serviceValidating = regexp.MustCompile(` - INFO - Validating (\S+)\.\.\.$`)
	// serviceResult is one result line: "<LEVEL> - <RESULT> - <message>".
	serviceResult = regexp.MustCompile(` - (?:ERROR|WARNING|INFO) - (PASS|FAIL|WARN) - (.*)$`)
)

// parseService reads the Service Validator's debug log
// (RedfishServiceValidatorDebug_*.log): each result is logged under the
// "Validating <uri>..." line of its resource.
func parseService(r io.Reader) (report, error) {
	var rep report
	uri := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := serviceValidating.FindStringSubmatch(line); m != nil {
			uri = m[1]
			rep.Reached = append(rep.Reached, uri)
			continue
		}
		m := serviceResult.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		switch m[1] {
		case "PASS":
			rep.Passed++
		case "FAIL":
			rep.Fails = append(rep.Fails, finding{URI: uri, Message: m[2]})
		case "WARN":
			rep.Warnings = append(rep.Warnings, finding{URI: uri, Message: m[2]})
		}
	}
	if err := sc.Err(); err != nil {
		return rep, fmt.Errorf("read service validator log: %w", err)
	}
	return rep, nil
}

var (
	// interopResource starts a resource in the Interop Validator's log.
	interopResource = regexp.MustCompile(`^INFO - \*\*\* (\S+), `)
	// interopSummaryPass is the summary's Pass row on the tool's output.
	interopSummaryPass = regexp.MustCompile(`^\| Pass\s+\|\s+(\d+) \|$`)
)

// parseInterop reads the Interop Validator's text log
// (ConformanceLog_*.txt): after "Listing any warnings and errors:" each
// resource with any is a line "INFO - <uri>", then its "WARNING - " and
// "ERROR - " records. ERROR records are what its summary counts as Fail.
// The Pass count comes from the summary on its output (stdout), the
// resources reached from the log's "*** <uri>, <type>" lines.
func parseInterop(log io.Reader, stdout string) (report, error) {
	var rep report
	listing, uri := false, ""
	sc := bufio.NewScanner(log)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " ")
		if !listing {
			if m := interopResource.FindStringSubmatch(line); m != nil {
				rep.Reached = append(rep.Reached, m[1])
			}
			listing = strings.HasPrefix(line, "Listing any warnings and errors")
			continue
		}
		switch {
		case strings.HasPrefix(line, "INFO - /redfish/"):
			uri = strings.TrimPrefix(line, "INFO - ")
		case strings.HasPrefix(line, "WARNING - "):
			rep.Warnings = append(rep.Warnings, finding{URI: uri, Message: strings.TrimSuffix(strings.TrimPrefix(line, "WARNING - "), " ...")})
		case strings.HasPrefix(line, "ERROR - "):
			rep.Fails = append(rep.Fails, finding{URI: uri, Message: strings.TrimSuffix(strings.TrimPrefix(line, "ERROR - "), " ...")})
		}
	}
	if err := sc.Err(); err != nil {
		return rep, fmt.Errorf("read interop validator log: %w", err)
	}
	if !listing {
		return rep, fmt.Errorf("interop validator log has no listing of warnings and errors")
	}
	for line := range strings.SplitSeq(stdout, "\n") {
		if m := interopSummaryPass.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			rep.Passed, _ = strconv.Atoi(m[1])
		}
	}
	return rep, nil
}

// parseProtocol reads the Protocol Validator's TSV report
// (RedfishProtocolValidationReport_*.tsv): a header, then one row per
// result: Assertion, Method, Status code, URI, Result, Message, Requirement.
func parseProtocol(r io.Reader) (report, error) {
	var rep report
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	header := true
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if header {
			if len(cols) < 6 || cols[0] != "Assertion" || cols[4] != "Result" {
				return rep, fmt.Errorf("protocol validator report: unexpected header %q", sc.Text())
			}
			header = false
			continue
		}
		if len(cols) < 6 {
			continue
		}
		switch cols[4] {
		case "PASS":
			rep.Passed++
			rep.Reached = append(rep.Reached, cols[3])
			rep.Assertions = append(rep.Assertions, cols[0])
		case "FAIL":
			rep.Fails = append(rep.Fails, finding{URI: cols[1] + " " + cols[3] + " (" + cols[2] + ")", Message: cols[0] + ": " + cols[5]})
		case "WARN":
			rep.Warnings = append(rep.Warnings, finding{URI: cols[1] + " " + cols[3], Message: cols[0] + ": " + cols[5]})
		}
	}
	if err := sc.Err(); err != nil {
		return rep, fmt.Errorf("read protocol validator report: %w", err)
	}
	if header {
		return rep, fmt.Errorf("protocol validator report is empty")
	}
	return rep, nil
}
