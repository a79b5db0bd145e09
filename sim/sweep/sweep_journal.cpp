// The journal's records: little-endian fields, cells tagged by kind, CRC-32 per record.
#include "sim/sweep/sweep_journal.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace clustersim {
namespace {

constexpr char kMagic[8] = {'C', 'S', 'J', 'R', 'N', 'L', '0', '1'};
constexpr char kSummaryRecord = 'S';
constexpr char kChunkRecord = 'C';
constexpr uint32_t kMaxRecordBytes = 1u << 30;  // larger lengths are corrupt

enum CellTag : uint8_t { kEmpty = 0, kNumber = 1, kYesNo = 2, kText = 3 };

uint32_t checksum(const std::string& bytes) {
  return static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

class Encoder {
 public:
  void byte(uint8_t value) { bytes_.push_back(static_cast<char>(value)); }
  void u32(uint32_t value) {
    for (int i = 0; i < 4; ++i) byte(static_cast<uint8_t>(value >> (8 * i)));
  }
  void i64(int64_t value) {
    const auto bits = static_cast<uint64_t>(value);
    for (int i = 0; i < 8; ++i) byte(static_cast<uint8_t>(bits >> (8 * i)));
  }
  void f64(double value) {
    int64_t bits;
    std::memcpy(&bits, &value, 8);
    i64(bits);
  }
  void text(const std::string& value) {
    u32(static_cast<uint32_t>(value.size()));
    bytes_ += value;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

// Reads fields in order; once a read runs past the end every later one fails too (ok() false).
class Decoder {
 public:
  explicit Decoder(const std::string& bytes) : bytes_(bytes) {}
  uint8_t byte() {
    if (at_ >= bytes_.size()) {
      ok_ = false;
      return 0;
    }
    return static_cast<uint8_t>(bytes_[at_++]);
  }
  uint32_t u32() {
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) value |= static_cast<uint32_t>(byte()) << (8 * i);
    return value;
  }
  int64_t i64() {
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(byte()) << (8 * i);
    return static_cast<int64_t>(value);
  }
  double f64() {
    const int64_t bits = i64();
    double value;
    std::memcpy(&value, &bits, 8);
    return value;
  }
  std::string text() {
    const uint32_t size = u32();
    if (!ok_ || size > bytes_.size() - at_) {
      ok_ = false;
      return {};
    }
    std::string value = bytes_.substr(at_, size);
    at_ += size;
    return value;
  }
  bool ok() const { return ok_; }
  bool at_end() const { return at_ == bytes_.size(); }

 private:
  const std::string& bytes_;
  size_t at_ = 0;
  bool ok_ = true;
};

void encode_progress(const SweepSummary& s, Encoder* e) {
  e->i64(s.next_index);
  e->i64(s.configurations);
  e->i64(s.rows);
  e->i64(s.simulated);
  e->byte(s.complete);
  e->u32(static_cast<uint32_t>(s.pruned.size()));
  for (const auto& [reason, count] : s.pruned) {
    e->text(reason);
    e->i64(count);
  }
}

void decode_progress(Decoder* d, SweepSummary* s) {
  s->next_index = d->i64();
  s->configurations = d->i64();
  s->rows = d->i64();
  s->simulated = d->i64();
  s->complete = d->byte() != 0;
  s->pruned.clear();
  for (uint32_t n = d->u32(); d->ok() && n > 0; --n) {
    std::string reason = d->text();
    s->pruned[std::move(reason)] = d->i64();
  }
}

std::vector<std::string> keys_of(const std::vector<ResultColumn>& columns) {
  std::vector<std::string> keys;
  for (const ResultColumn& column : columns) keys.push_back(column.key);
  return keys;
}

std::string summary_record(const SweepSummary& s, const std::vector<ResultColumn>& columns) {
  Encoder e;
  e.byte(kSummaryRecord);
  for (const std::string* text : {&s.scenario_name, &s.scenario_text, &s.tool_version, &s.catalog,
                                  &s.prices, &s.options, &s.other_inputs}) {
    e.text(*text);
  }
  e.i64(s.candidates);
  e.i64(s.shard);
  e.i64(s.shard_count);
  const std::vector<std::string> keys = keys_of(columns);
  e.u32(static_cast<uint32_t>(keys.size()));
  for (const std::string& key : keys) e.text(key);
  encode_progress(s, &e);
  return e.bytes();
}

// Decodes a summary record; false when it is malformed or has other columns than `columns`.
bool decode_summary(const std::string& payload, const std::vector<ResultColumn>& columns,
                    SweepSummary* s) {
  Decoder d(payload);
  if (d.byte() != kSummaryRecord) return false;
  for (std::string* text : {&s->scenario_name, &s->scenario_text, &s->tool_version, &s->catalog,
                            &s->prices, &s->options, &s->other_inputs}) {
    *text = d.text();
  }
  s->candidates = d.i64();
  s->shard = static_cast<int>(d.i64());
  s->shard_count = static_cast<int>(d.i64());
  std::vector<std::string> keys(d.u32());
  for (size_t i = 0; d.ok() && i < keys.size(); ++i) keys[i] = d.text();
  decode_progress(&d, s);
  return d.ok() && d.at_end() && keys == keys_of(columns);
}

std::string chunk_record(const std::vector<ResultRow>& rows, const SweepSummary& progress) {
  Encoder e;
  e.byte(kChunkRecord);
  encode_progress(progress, &e);
  e.u32(static_cast<uint32_t>(rows.size()));
  for (const ResultRow& row : rows) {
    for (const Table::Cell& cell : row) {
      if (const double* number = std::get_if<double>(&cell)) {
        e.byte(kNumber);
        e.f64(*number);
      } else if (const bool* yes = std::get_if<bool>(&cell)) {
        e.byte(kYesNo);
        e.byte(*yes);
      } else if (const std::string* text = std::get_if<std::string>(&cell)) {
        e.byte(kText);
        e.text(*text);
      } else {
        e.byte(kEmpty);
      }
    }
  }
  return e.bytes();
}

// Decodes a chunk record into `progress` and `visit`; false when malformed.
bool decode_chunk(const std::string& payload, size_t columns, SweepSummary* progress,
                  const SweepJournal::RowVisitor& visit) {
  Decoder d(payload);
  if (d.byte() != kChunkRecord) return false;
  SweepSummary after = *progress;
  decode_progress(&d, &after);
  std::vector<ResultRow> rows(d.u32());
  for (size_t r = 0; d.ok() && r < rows.size(); ++r) {
    rows[r].resize(columns);
    for (Table::Cell& cell : rows[r]) {
      switch (d.byte()) {
        case kEmpty:
          break;
        case kNumber:
          cell = d.f64();
          break;
        case kYesNo:
          cell = d.byte() != 0;
          break;
        case kText:
          cell = d.text();
          break;
        default:
          return false;
      }
    }
  }
  if (!d.ok() || !d.at_end()) return false;
  *progress = after;
  if (visit) {
    for (ResultRow& row : rows) visit(std::move(row));
  }
  return true;
}

// Reads the records of a journal one by one, telling a clean end from an incomplete last record
// (a torn write) and from a whole record that fails its checksum (damage).
class RecordReader {
 public:
  enum Read { kRecord, kEnd, kIncomplete, kDamaged };

  explicit RecordReader(const std::string& path) : in_(path, std::ios::binary) {
    in_.seekg(0, std::ios::end);
    size_ = in_ ? static_cast<size_t>(in_.tellg()) : 0;
    in_.seekg(0);
    char magic[sizeof kMagic];
    has_magic_ = in_.read(magic, sizeof magic) && std::memcmp(magic, kMagic, sizeof magic) == 0;
    good_end_ = has_magic_ ? sizeof kMagic : 0;
  }
  bool has_magic() const { return has_magic_; }
  // The next record's payload (kRecord), or why there is none.
  Read next(std::string* payload) {
    last_start_ = good_end_;
    last_number_ = records_ + 1;
    if (!has_magic_ || good_end_ == size_) return kEnd;
    unsigned char header[8];
    if (size_ - good_end_ < sizeof header) return kIncomplete;
    in_.read(reinterpret_cast<char*>(header), sizeof header);
    uint32_t size = 0, crc = 0;
    for (int i = 3; i >= 0; --i) {
      size = size << 8 | header[i];
      crc = crc << 8 | header[4 + i];
    }
    // A length no record has is damage; a kill tears the header only short of its 8 bytes.
    if (size > kMaxRecordBytes) return kDamaged;
    if (size_ - good_end_ - sizeof header < size) return kIncomplete;
    payload->resize(size);
    if (!in_.read(payload->data(), size) || checksum(*payload) != crc) return kDamaged;
    good_end_ += sizeof header + size;
    ++records_;
    return kRecord;
  }
  // Bytes up to the end of the last whole record read, and the file's.
  off_t good_end() const { return static_cast<off_t>(good_end_); }
  size_t size() const { return size_; }
  // The last record next() looked at: its number (from 1) and first byte.
  int64_t last_number() const { return last_number_; }
  size_t last_start() const { return last_start_; }

 private:
  std::ifstream in_;
  size_t size_ = 0;
  bool has_magic_ = false;
  size_t good_end_ = 0;
  int64_t records_ = 0;
  int64_t last_number_ = 0;
  size_t last_start_ = 0;
};

// "record 3 (from byte 120)": the record `reader` looked at last.
std::string record_named(const RecordReader& reader) {
  return "record " + std::to_string(reader.last_number()) + " (from byte " +
         std::to_string(reader.last_start()) + ")";
}

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

std::string journal_path(const std::string& out) { return out + ".partial"; }

SweepJournal::~SweepJournal() {
  if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<SweepJournal> SweepJournal::create(const std::string& out,
                                                   const SweepSummary& summary,
                                                   std::string* error,
                                                   const std::vector<ResultColumn>& columns) {
  const std::string path = journal_path(out);
  // Written whole under another name, then renamed: a kill at any instant leaves either no journal
  // or one with its summary, never a header that --resume would take for another version's.
  const std::string fresh = path + ".new";
  const int fd = ::open(fresh.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = system_error("cannot create " + fresh);
    return nullptr;
  }
  std::unique_ptr<SweepJournal> journal(new SweepJournal(path, fd, columns));
  if (::write(fd, kMagic, sizeof kMagic) != static_cast<ssize_t>(sizeof kMagic) ||
      !journal->write_record(summary_record(summary, columns), error)) {
    *error = system_error("cannot write " + fresh);
    return nullptr;
  }
  if (::rename(fresh.c_str(), path.c_str()) != 0) {
    *error = system_error("cannot rename " + fresh + " to " + path);
    return nullptr;
  }
  return journal;
}

std::unique_ptr<SweepJournal> SweepJournal::recover(const std::string& out, SweepSummary* summary,
                                                    const RowVisitor& visit, std::string* error,
                                                    const std::vector<ResultColumn>& columns,
                                                    std::string* cut) {
  const std::string path = journal_path(out);
  const std::string damaged = "; delete it to start over";
  RecordReader reader(path);
  std::string payload;
  RecordReader::Read read = reader.next(&payload);
  if (!reader.has_magic()) {
    *error = "no interrupted sweep to resume: " + path + " is missing or not a sweep journal";
    return nullptr;
  }
  if (read != RecordReader::kRecord) {
    *error = path + ": its first record (the sweep's identity) is " +
             (read == RecordReader::kDamaged
                  ? std::string("damaged (its length or checksum is wrong)")
                  : "cut off (the file ends at byte " + std::to_string(reader.size()) + ")") +
             damaged;
    return nullptr;
  }
  if (!decode_summary(payload, columns, summary)) {
    *error = "no interrupted sweep to resume: " + path +
             " was written by another version of clustersim or by another command";
    return nullptr;
  }
  while ((read = reader.next(&payload)) == RecordReader::kRecord) {
    if (!decode_chunk(payload, columns.size(), summary, visit)) {
      *error = path + ": " + record_named(reader) +
               " has a valid checksum but not a chunk's rows of these columns" + damaged;
      return nullptr;
    }
  }
  if (read == RecordReader::kDamaged) {
    *error = path + ": " + record_named(reader) +
             " is damaged (its length or checksum is wrong, which no interruption leaves)" +
             damaged;
    return nullptr;
  }
  if (cut) {
    *cut = read == RecordReader::kEnd
               ? ""
               : path + ": cut off its last " +
                     std::to_string(reader.size() - reader.last_start()) +
                     " bytes, an incomplete " + record_named(reader) +
                     " (the write the interruption stopped), and continues before it";
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, reader.good_end()) != 0 || ::lseek(fd, 0, SEEK_END) < 0) {
    *error = system_error("cannot reopen " + path);
    if (fd >= 0) ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<SweepJournal>(new SweepJournal(path, fd, columns));
}

bool SweepJournal::write_record(const std::string& payload, std::string* error) {
  Encoder header;
  header.u32(static_cast<uint32_t>(payload.size()));
  header.u32(checksum(payload));
  const std::string record = header.bytes() + payload;
  for (size_t done = 0; done < record.size();) {
    const ssize_t n = ::write(fd_, record.data() + done, record.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = system_error("cannot write " + path_);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

bool SweepJournal::append(const std::vector<ResultRow>& rows, const SweepSummary& progress,
                          std::string* error) {
  return write_record(chunk_record(rows, progress), error);
}

bool SweepJournal::for_each_row(const RowVisitor& visit, std::string* error) const {
  RecordReader reader(path_);
  std::string payload;
  SweepSummary summary;
  if (reader.next(&payload) != RecordReader::kRecord ||
      !decode_summary(payload, *columns_, &summary)) {
    *error = "cannot read back " + path_;
    return false;
  }
  RecordReader::Read read;
  while ((read = reader.next(&payload)) == RecordReader::kRecord) {
    if (!decode_chunk(payload, columns_->size(), &summary, visit)) {
      *error = "cannot read back " + path_ + ": " + record_named(reader) + " does not decode";
      return false;
    }
  }
  if (read != RecordReader::kEnd) {
    *error = "cannot read back " + path_ + ": " + record_named(reader) + " is damaged";
    return false;
  }
  return true;
}

void SweepJournal::remove() {
  ::close(fd_);
  fd_ = -1;
  ::unlink(path_.c_str());
}

}  // namespace clustersim
