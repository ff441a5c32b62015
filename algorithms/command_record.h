// A command and its reply as bytes: what a history keeps of a simulated command instead of its
// text, which most runs never read (only the timelines of overlap examples do). Copying the
// command's words in one piece costs a fraction of writing them out a word at a time; the text is
// written from the record when it is read, by the same Command::AppendTo and AppendTo(Reply), so
// it has the same bytes.
#pragma once

#include <string>
#include <string_view>

#include "algorithms/command.h"
#include "algorithms/reply.h"

namespace locklab {

// Appends the record of `cmd` and `reply` to *out (bytes of this build, not for files).
void AppendCommandRecord(const Command& cmd, const Reply& reply, std::string* out);
// Appends the text of a record AppendCommandRecord wrote: cmd.AppendTo, " -> ", then the reply's
// AppendTo. `record` must be one whole record (a history's own bytes: no check beyond its size).
void AppendCommandRecordText(std::string_view record, std::string* out);

}  // namespace locklab
