//! Length batching for inference: sequences sorted by length (ties by input order) are packed into batches of at
//! most `budget` padded tokens (`rows × longest`), so a batch wastes little padding and memory stays bounded; a
//! sequence longer than the budget gets a batch of its own.
use tch::{Device, Tensor};

/// Groups of sequence indices, shortest sequences first; every index appears exactly once.
pub fn length_batches(lens: &[usize], budget: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..lens.len()).collect();
    order.sort_by_key(|&i| (lens[i], i));
    let mut out = Vec::new();
    let mut k = 0;
    while k < order.len() {
        // Lengths ascend, so the last sequence of a batch is its longest.
        let mut end = k + 1;
        while end < order.len() && (end + 1 - k) * lens[order[end]] <= budget.max(1) {
            end += 1;
        }
        out.push(order[k..end].to_vec());
        k = end;
    }
    out
}

/// The sequences `rows` of `seqs` padded with `pad` to the longest: `(ids, mask, seq)`.
///
/// # Shapes
/// → ids `[rows, seq]` i64, mask `[rows, seq]` i64 (1 = real token), on `device`.
pub fn padded(seqs: &[&[i64]], pad: i64, device: Device) -> (Tensor, Tensor, usize) {
    let seq = seqs.iter().map(|s| s.len()).max().unwrap_or(0).max(1);
    let mut ids = Vec::with_capacity(seqs.len() * seq);
    let mut mask = Vec::with_capacity(seqs.len() * seq);
    for s in seqs {
        ids.extend(s.iter().copied().chain(std::iter::repeat_n(pad, seq - s.len())));
        mask.extend((0..seq).map(|j| i64::from(j < s.len())));
    }
    let shape = [seqs.len() as i64, seq as i64];
    (
        Tensor::from_slice(&ids).view(shape).to_device(device),
        Tensor::from_slice(&mask).view(shape).to_device(device),
        seq,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_cover_every_row_within_the_budget() {
        let lens = [3, 5, 2, 4, 9];
        let b = length_batches(&lens, 8);
        let mut all: Vec<usize> = b.iter().flatten().copied().collect();
        all.sort();
        assert_eq!(all, [0, 1, 2, 3, 4]);
        for batch in &b {
            let longest = batch.iter().map(|&i| lens[i]).max().unwrap();
            assert!(batch.len() * longest <= 8 || batch.len() == 1, "{batch:?}");
        }
        assert_eq!(b[0], [2, 0], "shortest first");
        let (ids, mask, seq) = padded(&[&[1, 2, 3], &[4]], 0, Device::Cpu);
        assert_eq!(seq, 3);
        assert_eq!(Vec::<i64>::try_from(ids.flatten(0, -1)).unwrap(), [1, 2, 3, 4, 0, 0]);
        assert_eq!(Vec::<i64>::try_from(mask.flatten(0, -1)).unwrap(), [1, 1, 1, 1, 0, 0]);
    }
}
