// Package bundle imports every connectd plugin for its registration side
// effect. Import it blank to get the whole connectd component set.
package bundle

import (
	_ "github.com/connectd/connectd/plugins/buffer/eventwindow"
	_ "github.com/connectd/connectd/plugins/input/kafkasource"
	_ "github.com/connectd/connectd/plugins/metrics/prometheus"
	_ "github.com/connectd/connectd/plugins/output/kafkasink"
	_ "github.com/connectd/connectd/plugins/processor/cel"
	_ "github.com/connectd/connectd/plugins/processor/tabledecode"
	_ "github.com/connectd/connectd/plugins/processor/tableencode"
)
