//! LZ4 block decompression (the block format of the LZ4 specification, "LZ4 Block
//! Format Description"): a sequence of (token, literals, offset, match) until the input
//! ends. nvcc's `--compress-mode=speed` stores PTX entries this way.

/// Decompresses one LZ4 block whose decompressed size is `size`.
pub fn decompress_block(input: &[u8], size: usize) -> Result<Vec<u8>, String> {
    let mut out: Vec<u8> = Vec::with_capacity(size);
    let mut i = 0usize;
    // Lengths of 15 continue in the following bytes, each adding up to 255 (spec §"Token").
    let more = |i: &mut usize, mut n: usize| -> Result<usize, String> {
        loop {
            let b = *input.get(*i).ok_or("truncated length")?;
            *i += 1;
            n = n.checked_add(b as usize).ok_or("length overflow")?;
            if b != 255 {
                return Ok(n);
            }
        }
    };
    while i < input.len() {
        let token = input[i];
        i += 1;
        let mut lit = (token >> 4) as usize;
        if lit == 15 {
            lit = more(&mut i, lit)?;
        }
        let lits = input
            .get(i..i.checked_add(lit).ok_or("literal overflow")?)
            .ok_or("truncated literals")?;
        if out.len() + lit > size {
            return Err(format!("output exceeds the stated size {size}"));
        }
        out.extend_from_slice(lits);
        i += lit;
        // The last sequence has literals only.
        if i >= input.len() {
            break;
        }
        let off = u16::from_le_bytes([
            *input.get(i).ok_or("truncated offset")?,
            *input.get(i + 1).ok_or("truncated offset")?,
        ]) as usize;
        i += 2;
        if off == 0 || off > out.len() {
            return Err(format!("match offset {off} outside the output"));
        }
        let mut len = (token & 15) as usize;
        if len == 15 {
            len = more(&mut i, len)?;
        }
        len += 4;
        if out.len() + len > size {
            return Err(format!("output exceeds the stated size {size}"));
        }
        // Byte by byte: a match may overlap the bytes it produces (offset < length).
        let start = out.len() - off;
        for k in 0..len {
            let b = out[start + k];
            out.push(b);
        }
    }
    if out.len() != size {
        return Err(format!(
            "decompressed {} bytes, the entry says {size}",
            out.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::decompress_block;

    #[test]
    fn overlapping_match_and_long_lengths() {
        // "a" then a match of offset 1, length 4 + 15 + 10 = 29 → 30 × "a", then "b".
        let block = [0x1f, b'a', 1, 0, 10, 0x10, b'b'];
        let out = decompress_block(&block, 31).unwrap();
        assert_eq!(out, [vec![b'a'; 30], vec![b'b']].concat());
    }

    #[test]
    fn bad_offsets_and_sizes_are_errors() {
        assert!(decompress_block(&[0x10, b'a', 5, 0], 10).is_err());
        assert!(decompress_block(&[0x10, b'a', 0, 0], 10).is_err());
        assert!(decompress_block(&[0x20, b'a'], 2).is_err());
        assert!(decompress_block(&[0x10, b'a'], 5).is_err());
    }
}
