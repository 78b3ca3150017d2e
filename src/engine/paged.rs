//! [`PagedVec`]: a vector indexed by a dense id (a flow id), stored in pages of
//! [`PAGE_LEN`] entries, whose pages are freed once every entry in them is *retired*.
//!
//! The simulator keeps two per-flow tables indexed by flow id: the flows' descriptions and
//! results ([`crate::host::Flow`], 56 B) and the flow → QP-slot map
//! ([`crate::host::FlowSlab`], 8 B: the sender's slot and the receiver's). Flow ids are handed out in start order, and a run that
//! streams its results ([`crate::sim::Simulator::stream_results`]) is done with a flow once
//! its record is written. Retiring it here lets a page go when its last flow is retired, so
//! the tables hold the pages with a flow still running (or not started) and nothing else: the
//! memory follows the flows in progress, not the flows in the run. A run that never retires
//! keeps every page, and the table is a plain vector in pages.
//!
//! An index costs one more dependent load than a `Vec` (the page pointer, in a small table
//! that stays in cache: 24 B per 4,096 ids).

/// log2 of the entries per page.
pub const PAGE_SHIFT: u32 = 12;
/// Entries per page (4,096).
pub const PAGE_LEN: usize = 1 << PAGE_SHIFT;
const MASK: usize = PAGE_LEN - 1;

/// A vector of `T` in pages of [`PAGE_LEN`], growing at the end, whose fully retired pages
/// are freed (see the module documentation). Entries of a freed page read as absent
/// ([`Self::get`] is `None`); indexing one panics.
#[derive(Clone, Debug)]
pub struct PagedVec<T> {
    /// Page `p` holds entries `[p · PAGE_LEN, (p + 1) · PAGE_LEN)`; `None` once freed.
    pages: Vec<Option<Vec<T>>>,
    /// Entries retired per page (`PAGE_LEN` fits a `u16`).
    retired: Vec<u16>,
    /// Entries pushed (including those of freed pages).
    len: usize,
    /// Pages freed so far.
    freed: usize,
}

impl<T> Default for PagedVec<T> {
    fn default() -> Self {
        PagedVec {
            pages: Vec::new(),
            retired: Vec::new(),
            len: 0,
            freed: 0,
        }
    }
}

impl<T> PagedVec<T> {
    /// An empty vector.
    pub fn new() -> Self {
        Self::default()
    }

    /// Entries pushed so far (those of freed pages included): the next index.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Nothing pushed yet?
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entry `i`, if pushed and its page not freed.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        self.pages.get(i >> PAGE_SHIFT)?.as_ref()?.get(i & MASK)
    }

    /// Entry `i` mutably, if pushed and its page not freed.
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.pages
            .get_mut(i >> PAGE_SHIFT)?
            .as_mut()?
            .get_mut(i & MASK)
    }

    /// Append `v` at index [`Self::len`].
    pub fn push(&mut self, v: T) {
        if self.len & MASK == 0 {
            self.pages.push(Some(Vec::with_capacity(PAGE_LEN)));
            self.retired.push(0);
        }
        let p = self.pages.len() - 1;
        match &mut self.pages[p] {
            Some(page) => page.push(v),
            // The last page fills before any retirement can free it (retire checks fullness).
            None => unreachable!("PagedVec: the page being filled was freed"),
        }
        self.len += 1;
    }

    /// Append a whole page's worth of entries (`page.len() == PAGE_LEN`, or fewer for the
    /// last page) at a page boundary: no copy.
    pub fn push_page(&mut self, page: Vec<T>) {
        assert!(
            self.len & MASK == 0 && page.len() <= PAGE_LEN,
            "PagedVec::push_page off a page boundary"
        );
        self.len += page.len();
        self.pages.push(Some(page));
        self.retired.push(0);
    }

    /// Reserve room in the page table for `additional` more entries (the pages themselves are
    /// allocated as they fill).
    pub fn reserve(&mut self, additional: usize) {
        let pages = (self.len + additional).div_ceil(PAGE_LEN);
        let more = pages.saturating_sub(self.pages.len());
        self.pages.reserve_exact(more);
        self.retired.reserve_exact(more);
    }

    /// Mark entry `i` retired (each entry at most once: the caller's contract). When every
    /// entry of its page has been pushed and retired, the page is freed.
    pub fn retire(&mut self, i: usize) {
        let p = i >> PAGE_SHIFT;
        let Some(r) = self.retired.get_mut(p) else {
            return;
        };
        debug_assert!(
            (*r as usize) < PAGE_LEN,
            "PagedVec: entry {i} retired twice"
        );
        *r += 1;
        if *r as usize == PAGE_LEN {
            self.pages[p] = None;
            self.freed += 1;
        }
    }

    /// Pages currently allocated.
    pub fn resident_pages(&self) -> usize {
        self.pages.len() - self.freed
    }

    /// The entries of the pages not freed, with their indices, ascending (in a run that
    /// never retires: every entry).
    pub fn iter_resident(&self) -> impl Iterator<Item = (usize, &T)> + '_ {
        self.pages.iter().enumerate().flat_map(|(p, page)| {
            page.iter().flat_map(move |pg| {
                pg.iter()
                    .enumerate()
                    .map(move |(j, v)| ((p << PAGE_SHIFT) + j, v))
            })
        })
    }

    /// The entries of the pages not freed, ascending.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.pages.iter().flatten().flat_map(|p| p.iter())
    }
}

impl<T: Clone> PagedVec<T> {
    /// Grow to `len` entries, the new ones `fill`.
    pub fn resize(&mut self, len: usize, fill: T) {
        while self.len < len {
            if self.len & MASK == 0 {
                let n = (len - self.len).min(PAGE_LEN);
                self.push_page(vec![fill.clone(); n]);
            } else {
                self.push(fill.clone());
            }
        }
    }

    /// A paged copy of `v`'s entries, consumed from its end so that the two copies never
    /// coexist in full.
    pub fn from_vec(mut v: Vec<T>) -> Self {
        let mut pages = Vec::with_capacity(v.len().div_ceil(PAGE_LEN));
        let n = v.len();
        while !v.is_empty() {
            let start = (v.len() - 1) & !MASK;
            pages.push(v.split_off(start));
            v.shrink_to_fit();
        }
        let mut out = PagedVec::new();
        out.pages.reserve_exact(pages.len());
        while let Some(p) = pages.pop() {
            out.push_page(p);
        }
        debug_assert_eq!(out.len, n);
        out
    }
}

impl<T> std::ops::Index<usize> for PagedVec<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        match self.get(i) {
            Some(v) => v,
            None => panic!(
                "PagedVec: index {i} out of range or retired (len {})",
                self.len
            ),
        }
    }
}

impl<T> std::ops::IndexMut<usize> for PagedVec<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        let len = self.len;
        match self.get_mut(i) {
            Some(v) => v,
            None => panic!("PagedVec: index {i} out of range or retired (len {len})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_index_and_page_boundaries() {
        let mut v = PagedVec::new();
        for i in 0..(2 * PAGE_LEN + 5) {
            v.push(i as u32);
        }
        assert_eq!(v.len(), 2 * PAGE_LEN + 5);
        assert_eq!(v[0], 0);
        assert_eq!(v[PAGE_LEN - 1], PAGE_LEN as u32 - 1);
        assert_eq!(v[PAGE_LEN], PAGE_LEN as u32);
        assert_eq!(v[2 * PAGE_LEN + 4], 2 * PAGE_LEN as u32 + 4);
        assert!(v.get(2 * PAGE_LEN + 5).is_none());
        v[7] = 99;
        assert_eq!(v[7], 99);
        assert_eq!(v.resident_pages(), 3);
        assert_eq!(v.iter().count(), v.len());
    }

    #[test]
    fn a_page_is_freed_when_all_its_entries_are_retired() {
        let mut v = PagedVec::new();
        for i in 0..(PAGE_LEN + 10) {
            v.push(i);
        }
        // Retire page 0 in reverse order except entry 3: still resident.
        for i in (0..PAGE_LEN).rev().filter(|&i| i != 3) {
            v.retire(i);
        }
        assert_eq!(v.resident_pages(), 2);
        assert_eq!(v.get(3), Some(&3));
        v.retire(3);
        assert_eq!(v.resident_pages(), 1);
        assert!(v.get(3).is_none() && v.get(0).is_none());
        assert_eq!(v[PAGE_LEN + 2], PAGE_LEN + 2);
        // The partly filled last page is not freed even with all its pushed entries retired.
        for i in PAGE_LEN..PAGE_LEN + 10 {
            v.retire(i);
        }
        assert_eq!(v.resident_pages(), 1);
        v.push(7);
        assert_eq!(v[PAGE_LEN + 10], 7);
        let ids: Vec<usize> = v.iter_resident().map(|(i, _)| i).collect();
        assert_eq!(ids, (PAGE_LEN..PAGE_LEN + 11).collect::<Vec<_>>());
    }

    #[test]
    fn from_vec_and_resize_match_a_vec() {
        for n in [
            0,
            1,
            PAGE_LEN - 1,
            PAGE_LEN,
            PAGE_LEN + 1,
            3 * PAGE_LEN + 17,
        ] {
            let v: Vec<u64> = (0..n as u64).map(|x| x * 3).collect();
            let p = PagedVec::from_vec(v.clone());
            assert_eq!(p.len(), n);
            assert_eq!(p.iter().copied().collect::<Vec<_>>(), v);
            let mut r = PagedVec::new();
            r.push(1u64);
            r.resize(n.max(1), 5);
            assert_eq!(r.len(), n.max(1));
            assert!(r.iter().skip(1).all(|&x| x == 5));
        }
    }

    #[test]
    #[should_panic(expected = "retired")]
    fn indexing_a_freed_entry_panics_with_a_message() {
        let mut v = PagedVec::new();
        for i in 0..PAGE_LEN {
            v.push(i);
            v.retire(i);
        }
        let _ = v[0];
    }
}
