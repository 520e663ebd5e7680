/* SPDX-License-Identifier: MIT */
/*
 * header.c - chunk and section headers (spec/FORMAT.md "Chunk header",
 * "Sections").
 */
#include "common/common_internal.h"

const uint8_t rec_magic[REC_MAGIC_LEN] = { 0x89, 0x52, 0x45, 0x43, 0x0D, 0x0A, 0x1A, 0x0A };

/* CRC32C of the first size bytes of a header with Header_Checksum as 0. */
static uint32_t header_checksum(const uint8_t *buf, size_t size)
{
	static const uint8_t zero[4];
	uint32_t crc = rec_crc32c(0, buf, REC_HOFF_HEADER_CRC);
	crc = rec_crc32c(crc, zero, 4);
	return rec_crc32c(crc, buf + REC_HOFF_HEADER_CRC + 4, size - (REC_HOFF_HEADER_CRC + 4));
}

void rec_chunk_header_encode(rec_chunk_header *h, uint8_t out[REC_HEADER_SIZE_V1])
{
	memset(out, 0, REC_HEADER_SIZE_V1); /* Unused 116..127 stay zero */
	h->header_size = REC_HEADER_SIZE_V1;
	memcpy(out + REC_HOFF_MAGIC, rec_magic, REC_MAGIC_LEN);
	rec_put_le16(out + REC_HOFF_MAJOR, h->major);
	rec_put_le16(out + REC_HOFF_MINOR, h->minor);
	rec_put_le32(out + REC_HOFF_HEADER_SIZE, h->header_size);
	rec_put_le32(out + REC_HOFF_PAYLOAD_CRC, h->payload_crc);
	rec_put_le64(out + REC_HOFF_PAYLOAD_SIZE, h->payload_size);
	rec_put_le32(out + REC_HOFF_FLAGS, h->flags);
	out[REC_HOFF_CODEC] = h->codec;
	out[REC_HOFF_LEVEL] = (uint8_t)h->level;
	rec_put_le16(out + REC_HOFF_SECTION_COUNT, h->section_count);
	rec_put_le64(out + REC_HOFF_RAW_SIZE, h->raw_size);
	rec_put_le64(out + REC_HOFF_EVENT_COUNT, h->event_count);
	rec_put_le64(out + REC_HOFF_START_WALL, (uint64_t)h->start_wall_ns);
	rec_put_le64(out + REC_HOFF_START_TICKS, h->start_ticks);
	rec_put_le64(out + REC_HOFF_TICK_FREQ, h->tick_frequency);
	rec_put_le64(out + REC_HOFF_DURATION, h->duration_ticks);
	rec_put_le64(out + REC_HOFF_RUN_ID, h->run_id);
	rec_put_le64(out + REC_HOFF_PROCESS_START, (uint64_t)h->process_start_ns);
	rec_put_le32(out + REC_HOFF_PID, h->pid);
	rec_put_le32(out + REC_HOFF_SEQUENCE, h->sequence);
	rec_put_le32(out + REC_HOFF_FRONT_CRC, h->front_crc);
	h->header_crc = header_checksum(out, REC_HEADER_SIZE_V1);
	rec_put_le32(out + REC_HOFF_HEADER_CRC, h->header_crc);
}

static rec_status header_fail(const char **msg, const char *text, rec_status st)
{
	if (msg)
		*msg = text;
	return st;
}

/* On any result, h holds what could be read: the invariant prefix (magic
 * ok and >= REC_PREFIX_SIZE bytes), and every field once the checksum and
 * version checks passed, so a caller can name a bad flag or codec and step
 * over a chunk of an unknown major (header_size + payload_size). */
rec_status rec_chunk_header_decode(const uint8_t *buf, size_t avail, rec_chunk_header *h,
				   const char **msg)
{
	uint32_t size;

	memset(h, 0, sizeof(*h));
	if (msg)
		*msg = NULL;
	if (avail < REC_MAGIC_LEN)
		return header_fail(msg, "truncated chunk header", REC_ERR_TRUNCATED);
	if (memcmp(buf + REC_HOFF_MAGIC, rec_magic, REC_MAGIC_LEN) != 0)
		return header_fail(msg, "bad magic", REC_ERR_BAD_MAGIC);
	if (avail < REC_PREFIX_SIZE)
		return header_fail(msg, "truncated chunk header", REC_ERR_TRUNCATED);

	h->major = rec_le16(buf + REC_HOFF_MAJOR);
	h->minor = rec_le16(buf + REC_HOFF_MINOR);
	h->header_size = size = rec_le32(buf + REC_HOFF_HEADER_SIZE);
	h->header_crc = rec_le32(buf + REC_HOFF_HEADER_CRC);
	h->payload_crc = rec_le32(buf + REC_HOFF_PAYLOAD_CRC);
	h->payload_size = rec_le64(buf + REC_HOFF_PAYLOAD_SIZE);

	if (size < REC_PREFIX_SIZE || size > REC_MAX_HEADER_SIZE)
		return header_fail(msg, "header size out of range", REC_ERR_CORRUPT);
	if (avail < size)
		return header_fail(msg, "truncated chunk header", REC_ERR_TRUNCATED);
	if (header_checksum(buf, size) != h->header_crc)
		return header_fail(msg, "header checksum mismatch", REC_ERR_CORRUPT);
	if (h->major != REC_FORMAT_MAJOR)
		return header_fail(msg, "unsupported format major version",
				   REC_ERR_UNSUPPORTED_VERSION);
	if (size < REC_HEADER_SIZE_V1)
		return header_fail(msg, "header size too small for format 1", REC_ERR_CORRUPT);

	h->flags = rec_le32(buf + REC_HOFF_FLAGS);
	h->codec = buf[REC_HOFF_CODEC];
	h->level = (int8_t)buf[REC_HOFF_LEVEL];
	h->section_count = rec_le16(buf + REC_HOFF_SECTION_COUNT);
	h->raw_size = rec_le64(buf + REC_HOFF_RAW_SIZE);
	h->event_count = rec_le64(buf + REC_HOFF_EVENT_COUNT);
	h->start_wall_ns = (int64_t)rec_le64(buf + REC_HOFF_START_WALL);
	h->start_ticks = rec_le64(buf + REC_HOFF_START_TICKS);
	h->tick_frequency = rec_le64(buf + REC_HOFF_TICK_FREQ);
	h->duration_ticks = rec_le64(buf + REC_HOFF_DURATION);
	h->run_id = rec_le64(buf + REC_HOFF_RUN_ID);
	h->process_start_ns = (int64_t)rec_le64(buf + REC_HOFF_PROCESS_START);
	h->pid = rec_le32(buf + REC_HOFF_PID);
	h->sequence = rec_le32(buf + REC_HOFF_SEQUENCE);
	h->front_crc = rec_le32(buf + REC_HOFF_FRONT_CRC); /* used only if announced */
	/* Bytes 116..header_size are Unused: ignored. */

	if (h->flags & REC_CHUNK_RESERVED_MASK)
		return header_fail(msg, "reserved header flag set", REC_ERR_UNSUPPORTED);
	if (h->codec > REC_CODEC_LZ4)
		return header_fail(msg, "unknown codec", REC_ERR_UNSUPPORTED);
	if (h->tick_frequency == 0)
		return header_fail(msg, "tick frequency is zero", REC_ERR_CORRUPT);
	return REC_OK;
}

void rec_section_header_encode(const rec_section_header *s, uint8_t out[REC_SECTION_HEADER_SIZE])
{
	rec_put_le16(out + 0, s->kind);
	rec_put_le16(out + 2, s->flags);
	rec_put_le32(out + 4, s->item_count);
	rec_put_le32(out + 8, s->stored_size);
	rec_put_le32(out + 12, s->raw_size);
}

void rec_section_header_decode(const uint8_t in[REC_SECTION_HEADER_SIZE], rec_section_header *s)
{
	s->kind = rec_le16(in + 0);
	s->flags = rec_le16(in + 2);
	s->item_count = rec_le32(in + 4);
	s->stored_size = rec_le32(in + 8);
	s->raw_size = rec_le32(in + 12);
}

bool rec_front_checksum(const uint8_t *payload, uint64_t size, uint16_t section_count,
			uint32_t *crc)
{
	uint32_t c = 0;
	uint64_t at = 0;
	for (uint32_t i = 0; i < section_count; i++) {
		if (size - at < REC_SECTION_HEADER_SIZE)
			return false;
		rec_section_header sh;
		rec_section_header_decode(payload + at, &sh);
		c = rec_crc32c(c, payload + at, REC_SECTION_HEADER_SIZE);
		at += REC_SECTION_HEADER_SIZE;
		if (sh.stored_size > size - at)
			return false;
		if (rec_section_in_front(sh.kind))
			c = rec_crc32c(c, payload + at, sh.stored_size);
		at += sh.stored_size;
	}
	*crc = c;
	return true;
}
