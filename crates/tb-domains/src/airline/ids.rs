//! Deterministic new ids: the rule the recorded traces use in place of `uuid.uuid4()`.
//! `random.Random(int(sha256(seed).hexdigest(), 16))` (CPython's Mersenne Twister seeded by
//! `init_by_array` with the seed's 32-bit words, least significant first), and each id draws
//! `getrandbits(128)` as `uuid.UUID(int=..., version=4)`.

use sha2::{Digest, Sha256};

const N: usize = 624;
const M: usize = 397;

/// `(uint32_t)i` of CPython's `_randommodule.c`: the low 32 bits of an index.
#[allow(
    clippy::cast_possible_truncation,
    reason = "C's uint32_t cast, as CPython does"
)]
fn low32(i: usize) -> u32 {
    i as u32
}

/// CPython's `random.Random` core (MT19937).
#[derive(Debug, Clone)]
pub struct PyRandom {
    mt: Box<[u32; N]>,
    index: usize,
}

impl PyRandom {
    fn init_genrand(s: u32) -> Self {
        let mut mt = Box::new([0u32; N]);
        mt[0] = s;
        for i in 1..N {
            mt[i] = 1_812_433_253u32
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
                .wrapping_add(low32(i));
        }
        PyRandom { mt, index: N }
    }

    /// `init_by_array(key)`.
    fn from_key(key: &[u32]) -> Self {
        let mut r = Self::init_genrand(19_650_218);
        let mt = &mut r.mt;
        let (mut i, mut j) = (1usize, 0usize);
        let klen = key.len().max(1);
        for _ in 0..N.max(klen) {
            let k = key.get(j).copied().unwrap_or(0);
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(k)
                .wrapping_add(low32(j));
            i += 1;
            j += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
            if j >= klen {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(low32(i));
            i += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        r
    }

    /// `random.Random(int(sha256(text).hexdigest(), 16))`.
    pub fn from_sha256_of(text: &str) -> Self {
        let digest = Sha256::digest(text.as_bytes());
        // The int's 32-bit words, least significant first (the digest is big-endian).
        let mut key: Vec<u32> = digest
            .chunks_exact(4)
            .rev()
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        while key.len() > 1 && key.last() == Some(&0) {
            key.pop();
        }
        Self::from_key(&key)
    }

    /// `genrand_uint32`.
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            let mt = &mut self.mt;
            for k in 0..N {
                let y = (mt[k] & 0x8000_0000) | (mt[(k + 1) % N] & 0x7fff_ffff);
                let mut v = mt[(k + M) % N] ^ (y >> 1);
                if y & 1 != 0 {
                    v ^= 0x9908_b0df;
                }
                mt[k] = v;
            }
            self.index = 0;
        }
        let mut y = self.mt[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `getrandbits(128)`: four words, the first the least significant.
    pub fn getrandbits_128(&mut self) -> u128 {
        (0..4).fold(0u128, |acc, i| {
            acc | (u128::from(self.next_u32()) << (32 * i))
        })
    }

    /// `uuid.UUID(int=getrandbits(128), version=4)` as its 128-bit value.
    pub fn uuid4(&mut self) -> u128 {
        let mut v = self.getrandbits_128();
        v &= !(0xc000u128 << 48);
        v |= 0x8000u128 << 48;
        v &= !(0xf000u128 << 64);
        v |= 4u128 << 76;
        v
    }
}

/// The canonical text of a uuid (`8-4-4-4-12` lowercase hex).
pub fn uuid_text(v: u128) -> String {
    let h = format!("{v:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_cpython_for_small_seeds() {
        // random.Random(42).getrandbits(32) == 2746317213 in CPython.
        let mut r = PyRandom::from_key(&[42]);
        assert_eq!(r.next_u32(), 2_746_317_213);
    }

    #[test]
    fn reproduces_a_recorded_uuid() {
        // traces.jsonl, test_000 solution: its one generated uuid4.
        let mut r =
            PyRandom::from_sha256_of("airline_tau_bench.py:test_000_book_one_way_economy_flight");
        assert_eq!(uuid_text(r.uuid4()), "ab15f316-c06c-433d-87b6-1c6339043072");
    }
}
