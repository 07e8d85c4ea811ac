// test_kernel_name.mjs — unit test of static/js/kernel_name.js (run by node
// through ctest): long C++ names lose their template and argument lists and
// nothing else, short or unbalanced names stay whole, and distinct names get
// distinct short names, numbered independently of their order.

import assert from 'node:assert/strict';

const eq = assert.equal;
import { shortName, shortNames, fitName } from '../../static/js/kernel_name.js';
import { runTests } from './js_test_runner.mjs';

const EIGEN =
  'void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<' +
  'Eigen::Tensor<float, 1, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorCwiseBinaryOp<' +
  'Eigen::internal::scalar_sum_op<float, float>, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, long>, 16, ' +
  'Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, long>(Eigen::TensorEvaluator<' +
  'Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, 1, 1, long>, 16, Eigen::MakePointer>, ' +
  'Eigen::TensorCwiseBinaryOp<Eigen::internal::scalar_sum_op<float, float>, Eigen::TensorMap<' +
  'Eigen::Tensor<float const, 1, 1, long>, 16, Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, long)';

const tests = {
  elides_template_and_argument_lists() {
    assert.equal(shortName(EIGEN), 'void Eigen::internal::EigenMetaKernel<…>(…)');
    const lambda =
      'void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(' +
      'at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >' +
      '(int, at::detail::Array<char*, 2>)';
    assert.equal(shortName(lambda), 'void at::native::vectorized_elementwise_kernel<…>(…)');
    const anon =
      'void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, float const*, int)';
    assert.equal(shortName(anon), 'void (anonymous namespace)::softmax_warp_forward<…>(…)');
    assert.equal(
      shortName('x'.repeat(70) + '::operator()<int, float, double, long, short>(int)'),
      'x'.repeat(70) + '::operator()<…>(…)',
    );
    assert.equal(
      shortName('a_very_long_kernel_name_with_an_empty_argument_list_and_nothing_else()'),
      'a_very_long_kernel_name_with_an_empty_argument_list_and_nothing_else()',
    );
  },
  keeps_short_and_unbalanced_names_whole() {
    assert.equal(shortName('void foo<float>(int)'), 'void foo<float>(int)');
    assert.equal(shortName('fusion.123'), 'fusion.123');
    const open = 'void unbalanced<' + 'a, '.repeat(30) + 'b(int)';
    assert.equal(shortName(open), open);
    assert.equal(shortName(null), null);
  },
  never_cuts_mid_token() {
    const s = shortName(EIGEN);
    // every identifier of the short name is whole in the full one
    for (const tok of s.match(/[A-Za-z_][A-Za-z_0-9]*/g)) assert.match(EIGEN, new RegExp(`\\b${tok}\\b`));
    assert.ok(EIGEN.startsWith(s.slice(0, s.indexOf('<'))));
  },
  distinct_names_stay_distinct() {
    const dbl = EIGEN.replace(/float/g, 'double');
    const half = EIGEN.replace(/float/g, 'half');
    const m = shortNames([half, EIGEN, dbl, EIGEN, 'short']);
    assert.equal(m.size, 4);
    assert.equal(new Set(m.values()).size, 4);
    assert.equal(m.get('short'), 'short');
    // numbered in the order of the full names, whatever the order given
    const sorted = [EIGEN, dbl, half].sort();
    sorted.forEach((n, i) => assert.equal(m.get(n), `void Eigen::internal::EigenMetaKernel<…>(…) #${i + 1}`));
    const again = shortNames([dbl, half, EIGEN]);
    for (const n of sorted) assert.equal(again.get(n), m.get(n));
  },
  a_number_never_takes_another_names_text() {
    const base = 'void Eigen::internal::EigenMetaKernel<…>(…)';
    const m = shortNames([EIGEN, EIGEN.replace(/float/g, 'double'), base + ' #1']);
    assert.equal(new Set(m.values()).size, 3);
    assert.equal(m.get(base + ' #1'), base + ' #1');
  },
  chart_labels_drop_qualifiers_not_token_ends() {
    const s = 'void at::native::batch_norm_collect_statistics_kernel<…>(…)';
    eq(fitName(s, 80), s);
    const two = '…native::batch_norm_collect_statistics_kernel<…>(…)';
    eq(fitName(s, two.length), two);
    eq(fitName(s, two.length - 1), '…batch_norm_collect_statistics_kernel<…>(…)');
    eq(fitName('a_single_token_much_longer_than_the_room', 10), 'a_single_…');
  },
};

runTests(tests);
