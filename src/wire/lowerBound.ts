/** How many of the ascending `values` are below `limit`: the index of the first not below it (binary search). */
export function lowerBound(values: readonly number[], limit: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (values[mid]! < limit) low = mid + 1;
    else high = mid;
  }
  return low;
}
