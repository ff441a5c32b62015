// RESP request encoding: a command's words as the array of bulk strings redis-server reads
// ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), the same bytes hiredis's redisFormatCommandArgv makes.
// The caller keeps the buffer between commands, so a warm buffer encodes without allocating
// (hiredis's formatter grows a fresh string word by word: most of the runtime's per-command work).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace locklab {

// Appends "*<count>\r\n": then `count` words must follow.
void AppendRespArrayHeader(std::string* out, size_t count);
// Appends one word: "$<length>\r\n<bytes>\r\n" (any bytes, NUL included).
void AppendRespWord(std::string* out, std::string_view word);

}  // namespace locklab
