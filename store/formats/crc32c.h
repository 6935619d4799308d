// CRC-32C (Castagnoli, polynomial 0x1EDC6F41 reflected 0x82F63B78), as used by iSCSI, ext4,
// LevelDB and TensorFlow, and TensorFlow's "masked" form of it for data that embeds CRCs.
//
// Uses the SSE4.2 crc32 instruction when the CPU has it, else a slicing-by-8 table. Pure and
// thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace podsched::formats {

// CRC-32C of `data`: Crc32c("123456789") == 0xE3069283.
uint32_t Crc32c(std::string_view data);

// The CRC-32C of A+B given crc == Crc32c(A).
uint32_t Crc32cExtend(uint32_t crc, std::string_view data);

// TensorFlow's mask: a CRC stored inside CRC-protected data is rotated and offset so that the
// CRC of a string containing CRCs does not degenerate.
constexpr uint32_t kCrcMaskDelta = 0xa282ead8u;
constexpr uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kCrcMaskDelta; }
constexpr uint32_t UnmaskCrc(uint32_t masked) {
  uint32_t rot = masked - kCrcMaskDelta;
  return (rot >> 17) | (rot << 15);
}

// The table implementation alone, whatever the CPU (tests compare it with the SSE4.2 one).
uint32_t Crc32cExtendPortable(uint32_t crc, std::string_view data);

// Which implementation Crc32c uses on this CPU: "sse4.2" or "table".
std::string_view Crc32cImplementation();

}  // namespace podsched::formats
