// Checks of single catalog entries (GPU, instance type, storage tier, fabric, model) that need no
// other entry. References between entries are checked by the Catalog once everything is loaded.
#pragma once

#include "sim/io/field_checker.h"

namespace clustersim {

// Each function reports every problem of the entry at `entry` (a checker on the entry message).
void check_gpu(const FieldChecker& entry);
void check_instance(const FieldChecker& entry);
void check_storage(const FieldChecker& entry);
void check_provider(const FieldChecker& entry);
void check_fabric(const FieldChecker& entry);
void check_link_class(const FieldChecker& entry);
void check_runtime(const FieldChecker& entry);
void check_serving_runtime(const FieldChecker& entry);
void check_model(const FieldChecker& entry);  // in model_checks.cpp
// The highest price of an instance-hour in any currency, and the range of an exchange rate: about
// 2,000 times the costliest catalog entry (520 CNY an hour), and 50 times the widest rate between
// two currencies (about 2e4: a US dollar in Indonesian rupiah), so that no cost (a price x nodes x
// hours) overflows: a price of 1e308 printed every cost as inf.
inline constexpr double kMaxPricePerHour = 1e6;
// The highest storage price per unit (GiB, MiB/s or IOPS) and month: about 1,000 times the
// costliest in the catalog (FSx for Lustre's 0.145 USD per GiB-month) times the CNY rate, so that
// no cost (a price x units x hours) overflows.
inline constexpr double kMaxStoragePricePerMonth = 1e3;
inline constexpr double kMinExchangeRate = 1e-6;
inline constexpr double kMaxExchangeRate = 1e6;
// The most vCPUs of an instance: twice the largest machines sold (AWS u7inh-32tb.480xlarge, 1,920
// vCPUs), so that the input pipeline's advice, which simulates a worker per vCPU, stays bounded.
inline constexpr int kMaxVcpus = 4096;
// One price of an instance (also of a user price override).
void check_price(const FieldChecker& price);

// The entry's source: a citation is expected for every number in a catalog (warning if absent).
void check_source(const FieldChecker& entry);

}  // namespace clustersim
