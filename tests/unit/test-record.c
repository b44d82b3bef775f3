/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestRecord"

#include "config.h"

#include <math.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-record.h"

/*
 * Every expected string below was printed by /usr/bin/python3 (3.11): json.dumps(...,
 * sort_keys=True), repr(float) and str(value), so these tests pin the byte-for-byte
 * compatibility that lets Loki collapse replayed lines.
 */

static gchar *
render(const SflRecord *record)
{
	GString *out = g_string_new(NULL);
	sfl_record_append_json(record, out);
	return g_string_free(out, FALSE);
}

static gchar *
pystr(const SflField *field)
{
	GString *out = g_string_new(NULL);
	sfl_field_append_pystr(field, out);
	return g_string_free(out, FALSE);
}

typedef struct {
	gdouble value;
	const gchar *repr;
} FloatCase;

/* hand-picked edge cases, 150 random bit patterns, rounded decimals and powers of two */
static const FloatCase float_cases[] = {
	{ 0x1.999999999999ap-4, "0.1" },
	{ 0x1.4f8b588e368f1p-17, "1e-05" },
	{ 0x1.1c37937e08000p+53, "1e+16" },
	{ 0x1.b69b4ba630f35p+56, "1.2345678901234568e+17" },
	{ 0x0.0000000000001p-1022, "5e-324" },
	{ 0x1.fffffffffffffp+1023, "1.7976931348623157e+308" },
	{ -0.0, "-0.0" },
	{ 0.0, "0.0" },
	{ 0x1.0000000000000p+0, "1.0" },
	{ 0x1.9318000000000p+13, "12899.0" },
	{ 0x1.1eb2d66005835p+997, "1.5e+300" },
	{ 0x1.1c37937e08000p+53, "1e+16" },
	{ 0x1.c6bf526340000p+49, "1000000000000000.0" },
	{ 0x1.a36e2eb1c432dp-14, "0.0001" },
	{ 0x1.0624dd2f1a9fcp-10, "0.001" },
	{ 0x1.a36e2eb1c432dp-14, "0.0001" },
	{ 0x1.0f0cf064dd592p+73, "1e+22" },
	{ 0x1.52d02c7e14af6p+76, "1e+23" },
	{ 0x1.0000000000000p+53, "9007199254740992.0" },
	{ 0x0.0000000000003p-1022, "1.5e-323" },
	{ 0x1.3333333333334p-2, "0.30000000000000004" },
	{ 0x1.5555555555555p-2, "0.3333333333333333" },
	{ 0x1.5555555555555p-1, "0.6666666666666666" },
	{ -0x1.8000000000000p+0, "-1.5" },
	{ 0x1.9000000000000p+6, "100.0" },
	{ 0x1.0000000000000p+53, "9007199254740992.0" },
	{ 0x1.ad7f29abcaf48p-24, "1e-07" },
	{ 0x1.edd2f1a9fbe77p+6, "123.456" },
	{ 0x1.fe185ca57c517p+78, "6.02214076e+23" },
	{ 0x1.0000000000000p-1022, "2.2250738585072014e-308" },
	{ 0x0.fffffffffffffp-1022, "2.225073858507201e-308" },
	{ 0x0.0000000000001p-1022, "5e-324" },
	{ 0x1.ddd4baa009303p+999, "1e+301" },
	{ 0x1.0000000000000p-1, "0.5" },
	{ 0x1.0000000000000p-2, "0.25" },
	{ 0x1.921f9f01b866ep+1, "3.14159" },
	{ 0x1.5bf0a8b145769p+1, "2.718281828459045" },
	{ 0x1.18b54f22aeb03p+50, "1234567890123456.8" },
	{ 0x1.5ee2a2eb5a5c4p+53, "1.2345678901234568e+16" },
	{ 0x1.6345785d8a000p+56, "1e+17" },
	{ 0x1.9999999999999p-1, "0.7999999999999999" },
	{ 0x0.0000000000002p-1022, "1e-323" },
	{ 0x1.0000000000000p+1023, "8.98846567431158e+307" },
	{ 0x1.0000000000000p+1023, "8.98846567431158e+307" },
	{ 0x1.0000000000000p-1022, "2.2250738585072014e-308" },
	{ 0x0.05c0ab9347ed7p-1022, "5e-310" },
	{ 0x1.199999999999ap+0, "1.1" },
	{ 0x1.199999999999ap+1, "2.2" },
	{ 0x1.1666666666666p+2, "4.35" },
	{ 0x1.1eb851eb851ecp-5, "0.035" },
	{ 0x1.b1ae4d6e2ef50p+69, "1e+21" },
	{ 0x1.0c6f7a0b5ed8dp-20, "1e-06" },
	{ 0x1.6b082c2148b8ep-60, "1.23e-18" },
	{ -0x1.74de452e6b438p+811, "-1.989032661366619e+244" },
	{ 0x1.3270e269e0d37p+594, "7.761117632285041e+178" },
	{ 0x1.c7fd0a6a3a450p-826, "3.980498358697587e-249" },
	{ -0x1.f0824128b2f33p+292, "-1.5432835417340557e+88" },
	{ 0x1.8e811892f902bp-638, "1.3647584518757569e-192" },
	{ -0x1.1985d5d9dc9f8p-684, "-1.3701135617873088e-206" },
	{ -0x1.25d940ed90475p+655, "-1.7160537630466207e+197" },
	{ 0x1.675cc81e74ef5p-144, "6.294675241195386e-44" },
	{ 0x1.0a35a099950d8p-671, "1.0613447212142254e-202" },
	{ 0x1.d549b6f03675ap+689, "4.708325160387546e+207" },
	{ 0x1.c172411e20b8fp-38, "6.387016158513563e-12" },
	{ -0x1.16ece1738f7d9p-814, "-9.973130378568733e-246" },
	{ 0x1.1ddb66cad4a26p-781, "8.779753225680271e-236" },
	{ -0x1.192cfd3ac94afp-755, "-5.795503248498993e-228" },
	{ -0x1.c105d1fb17c23p+809, "-5.988180159386011e+243" },
	{ -0x1.0b33839263059p-488, "-1.306052388527796e-147" },
	{ -0x1.f48f1a09f76b5p-684, "-2.436117699484841e-206" },
	{ 0x1.630f1f29d0da9p-770, "2.233386999150174e-232" },
	{ -0x1.60af593bd04cfp-673, "-3.51527970626667e-203" },
	{ 0x1.1e29c658cda14p-820, "1.5987381841032883e-247" },
	{ 0x1.8d190f9ebdaccp-118, "4.6678633181812096e-36" },
	{ -0x1.1973e0becd7b0p-791, "-8.441872792105456e-239" },
	{ 0x1.7beaddbc496cbp-478, "1.9015657400796622e-144" },
	{ 0x1.cb2424a23d596p+693, "7.370437700706684e+208" },
	{ -0x1.a63ec24ede6a4p-857, "-1.7163996725272777e-258" },
	{ -0x1.766581e27a1c0p-733, "-3.2367190832119987e-221" },
	{ -0x1.d05584ef8aa38p-777, "-2.2818334634712625e-234" },
	{ -0x1.7ba94d0eda82fp-278, "-3.0536383926309363e-84" },
	{ 0x1.1dbe22e44158bp-601, "1.3449551894627777e-181" },
	{ -0x1.a736994e3bf91p-732, "-7.317495976062606e-221" },
	{ 0x1.850c5a38fd547p-254, "5.249822308814304e-77" },
	{ 0x1.135d25f557203p-624, "1.5450754142984396e-188" },
	{ -0x1.ce4228c38fb29p-155, "-3.953625698224792e-47" },
	{ -0x1.a70c31012f037p-760, "-2.72491267476498e-229" },
	{ -0x1.769b10f4205b4p-536, "-6.505141861548772e-162" },
	{ 0x1.5052434b9b5dfp+1010, "1.441484839555994e+304" },
	{ -0x1.ed162ae2eb154p-894, "-1.4583679262758548e-269" },
	{ -0x1.877186d76b07ep+112, "-7.939416668807721e+33" },
	{ 0x1.1af10506bf2efp+884, "1.4255183989699612e+266" },
	{ -0x1.6a78795e761d1p+711, "-1.525315701232403e+214" },
	{ 0x1.0a9587403e430p+458, "7.750545741548908e+137" },
	{ 0x1.8e2774cbd87adp-6, "0.024301399287089676" },
	{ 0x1.5319acb5c7427p-287, "5.326960081783017e-87" },
	{ -0x1.2ea20b2f14c94p+123, "-1.2570882301712172e+37" },
	{ 0x1.4733f3e7d1bfbp-688, "9.952684009002448e-208" },
	{ 0x1.d2055930d6eafp+206, "1.8721667527122837e+62" },
	{ 0x1.ff20686734721p+1004, "3.422978398947072e+302" },
	{ 0x1.e05cde00902c7p+383, "3.6967297937384553e+115" },
	{ 0x1.6cc3ababced20p+815, "3.113284956169447e+245" },
	{ -0x1.4bcfc49b64a08p-577, "-2.6202582260546103e-174" },
	{ 0x1.d4acefaecbd38p-724, "2.0745096302730225e-218" },
	{ -0x1.e07bc1e398f10p-975, "-5.877500503097409e-294" },
	{ 0x1.af4d46b0a18e8p-348, "2.938345597354166e-105" },
	{ 0x1.0f82ec1d3fcffp+378, "6.529598674765832e+113" },
	{ -0x1.acbe226e87555p+751, "-1.9837344250050814e+226" },
	{ 0x1.46c697d2caf82p+704, "1.0743030475716402e+212" },
	{ -0x1.6e1f40a097c97p+869, "-5.629271400715247e+261" },
	{ 0x1.eef86ab1031d0p-706, "5.743310614918485e-213" },
	{ -0x1.e0d7ac3baea9ep-786, "-4.61515470702556e-237" },
	{ -0x1.2135e92b1d3f2p+161, "-3.302201168194502e+48" },
	{ -0x1.f9acae01f5057p+280, "-3.8373366379117136e+84" },
	{ 0x1.242425051c1ccp+370, "2.7444240984593666e+111" },
	{ 0x1.54a7bb1fee08fp+411, "7.037254769664525e+123" },
	{ 0x1.6144b98289fcdp+1011, "3.0282415270685036e+304" },
	{ -0x1.11cdd9474031bp+193, "-1.3427313830183207e+58" },
	{ 0x1.a72d174c9df6ap-742, "7.145365052251808e-224" },
	{ 0x1.5e837d70820fep-640, "3.0010119427191346e-193" },
	{ 0x1.abd81f1d69ed6p+82, "8.08174890787967e+24" },
	{ -0x1.15945795e8229p-216, "-1.029599445714058e-65" },
	{ 0x1.3d6b2aa05e11ap-757, "1.6356324386913733e-228" },
	{ -0x1.d420f0f88080bp-77, "-1.210084267904234e-23" },
	{ 0x1.26dcbb394fb36p+245, "6.512205859834416e+73" },
	{ -0x1.448b3a5aa3c81p-704, "-1.5063173670565552e-212" },
	{ -0x1.58f33fe3b890bp-281, "-3.468068334360956e-85" },
	{ 0x1.58370d269a9a5p+802, "3.5862982565236525e+241" },
	{ -0x1.4eb5248db40afp-136, "-1.500880737539812e-41" },
	{ -0x1.5128862c33a4fp+562, "-1.9881605394901064e+169" },
	{ 0x1.5563dab2cd31ep+398, "8.608929980762736e+119" },
	{ -0x1.e583505c6af07p+781, "-2.412056419517317e+235" },
	{ 0x1.fb2297631a992p+432, "2.1970596639628e+130" },
	{ -0x1.539382b0537e6p-569, "-6.864829614150003e-172" },
	{ 0x1.2aa0a1df9fd78p+999, "6.249646571111859e+300" },
	{ 0x1.c76fb0f17a300p-130, "1.3070380624806793e-39" },
	{ 0x1.52399c4aaeac1p+154, "3.0170681842882087e+46" },
	{ -0x1.561e6211c70cfp-47, "-9.495701001087435e-15" },
	{ 0x1.c9f503f63af83p+606, "4.750750204750985e+182" },
	{ -0x1.477d26415479cp+684, "-1.0267710304426359e+206" },
	{ 0x1.b103cdf1582b0p+1010, "1.8559166032057722e+304" },
	{ 0x1.6fb1a14a0f9e7p-342, "1.6032007377980954e-103" },
	{ 0x1.2287672fdf202p+622, "1.9751801151887592e+187" },
	{ 0x1.0771f8ca81811p+115, "4.274642804177215e+34" },
	{ 0x1.d977ee2257159p-463, "7.765387138513795e-140" },
	{ 0x1.6aab0d1bc52d9p+740, "8.193439767873551e+222" },
	{ -0x1.b305fdd2e1609p-818, "-9.721565446084252e-247" },
	{ -0x1.66a3a47469a4dp-178, "-3.6566096214330605e-54" },
	{ -0x1.91b4a6a50df4dp+969, "-7.829495745681799e+291" },
	{ -0x1.6f0245bd86d40p-275, "-2.361499160522349e-83" },
	{ 0x1.499c9e25a7605p+535, "1.448139668433268e+161" },
	{ 0x1.287fff52ddf5dp-78, "3.8321725482165366e-24" },
	{ 0x1.e7c2a26a2c0bdp-684, "2.373829056313949e-206" },
	{ 0x1.b7dbd2d1c9af0p-404, "4.1586747791282524e-122" },
	{ -0x1.48c893b618676p-374, "-3.337733639824717e-113" },
	{ 0x1.6909e3bbbe9eap-974, "8.832790543982714e-294" },
	{ -0x1.28c2e7c26847fp+333, "-2.0284108606212458e+100" },
	{ 0x1.e05cf96d0cc5fp-277, "7.7271785554382585e-84" },
	{ 0x1.c9cbc43435cc5p+131, "4.868121678598285e+39" },
	{ 0x1.b0c4e010c4759p-427, "4.877621251706118e-129" },
	{ -0x1.af4016b4013efp-882, "-5.224362650831876e-266" },
	{ -0x1.caaf75e8766edp-574, "-2.8977267740353203e-173" },
	{ 0x1.088f590fbbd11p+282, "8.030506098092244e+84" },
	{ 0x1.03626f3fe39c0p-509, "6.045556425707975e-154" },
	{ -0x1.4a8b2b0c4312dp+448, "-9.38484012349791e+134" },
	{ -0x1.1e07a83f73f16p+821, "-1.5624204901097633e+247" },
	{ -0x1.be1c29e1a8ef4p-389, "-1.3820816268679183e-117" },
	{ -0x1.28881ad1b72dbp-41, "-5.267460409693142e-13" },
	{ 0x1.69a5d0dd27a65p+847, "1.3257208647146701e+255" },
	{ -0x1.88334e647cb8fp+496, "-3.1343387564175544e+149" },
	{ -0x1.ed0b6c7ac1491p+827, "-1.7236642596087033e+249" },
	{ -0x1.a2b7fdfe01893p-284, "-5.26215508230537e-86" },
	{ -0x1.c6ec8cc4169a3p-781, "-1.3972441246414233e-235" },
	{ 0x1.7e4236472f1a3p+607, "7.930940904982885e+182" },
	{ 0x1.50cad66237a04p+591, "1.0662269838816983e+178" },
	{ 0x1.5145c1a81682cp+949, "6.269123622077618e+285" },
	{ 0x1.36886a260cd0bp+617, "6.597432204635068e+185" },
	{ 0x1.bc97d0fef7928p-243, "1.2286657182299287e-73" },
	{ -0x1.32d0d113db17dp+962, "-4.671898820796292e+289" },
	{ 0x1.cec313571810ap+781, "2.2990284766219708e+235" },
	{ 0x1.442f9298cb3a5p-573, "4.0960622500000236e-173" },
	{ -0x1.94309570dc195p-611, "-1.8578815093690756e-184" },
	{ 0x1.58ca00d75985dp-604, "2.028598735161868e-182" },
	{ -0x1.8bb16000f49c8p-750, "-2.6098858497543247e-226" },
	{ -0x1.fd7b326b94c7fp-874, "-1.5800543282391385e-263" },
	{ -0x1.e4e4519f9919cp+815, "-4.138580468110595e+245" },
	{ -0x1.de2a05d158a2fp-558, "-1.979700384530873e-168" },
	{ 0x1.0339d068739fap-735, "5.602624368784844e-222" },
	{ 0x1.c631cdfd43f37p-172, "2.9637577225244357e-52" },
	{ 0x1.0914a9d33a01cp+518, "8.885378326057658e+155" },
	{ -0x1.8aa872607679dp-473, "-6.321104805376388e-143" },
	{ -0x1.98d7c4093f6dep+842, "-4.683524268002167e+253" },
	{ -0x1.ef80f58ee8571p-605, "-1.4576712926495294e-182" },
	{ 0x1.1fd925d39d0a8p+919, "4.982985442018492e+276" },
	{ 0x1.7cec31f7296abp-551, "2.018688023533605e-166" },
	{ 0x1.20724d953ee26p+976, "7.19616430630608e+293" },
	{ -0x1.29ba3fe3bfadap+934, "-1.6888652122551737e+281" },
	{ 0x1.b2c68774b15d7p+944, "2.5254629938390568e+284" },
	{ 0x1.58dbe7bdc968bp+254, "3.899603970996924e+76" },
	{ 0x1.4e25a15fc899ep-433, "5.884498686465263e-131" },
	{ -0x1.aa1551a28f7b3p-1, "-0.8321939001977995" },
	{ -0x1.7a86557b6fb7ep-39, "-2.6895800563014877e-12" },
	{ 0x1.6f7a243c71b9ap+937, "1.667616833822443e+282" },
	{ 0x1.4125d851eb852p+19, "657710.76" },
	{ 0x1.fe7426e978d50p+14, "32669.038" },
	{ 0x1.b86a64a9faa55p+19, "901971.1457494" },
	{ -0x1.0e03c53f3158cp+18, "-276495.08198198" },
	{ 0x1.9470721941144p+19, "828291.56558279" },
	{ -0x1.8a5b266666666p+18, "-403820.6" },
	{ 0x1.7f3264985f06fp+18, "392393.5718" },
	{ 0x1.1f736b851eb85p+15, "36793.71" },
	{ -0x1.19d7ea3d70a3dp+18, "-288607.66" },
	{ 0x1.fd4197085fa00p+15, "65184.79498576" },
	{ -0x1.4caf80a3d70a4p+18, "-340670.01" },
	{ 0x1.ba4c3916872b0p+17, "226456.446" },
	{ 0x1.2ae7a56d20297p+19, "612157.169571" },
	{ 0x1.d480829fbe76dp+18, "479746.041" },
	{ -0x1.250c81100dc9fp+19, "-600164.0332097" },
	{ -0x1.1a1ac00000000p+18, "-288875.0" },
	{ 0x1.de20e58c7e282p+19, "979207.1734" },
	{ -0x1.b1bfc00000000p+15, "-55519.875" },
	{ 0x1.7804f889a0275p+18, "385043.8834" },
	{ -0x1.9c48a4fbfc654p+16, "-105544.64447" },
	{ 0x1.bc5628678c005p+19, "910001.26264" },
	{ -0x1.99a1766666666p+19, "-838923.7" },
	{ -0x1.0ac08b1a9fbe7p+19, "-546308.347" },
	{ -0x1.3ceb4294a6803p+18, "-324525.0403229" },
	{ 0x1.e4a2800000000p+17, "248133.0" },
	{ -0x1.40ba4b827fa1ap+15, "-41053.14748" },
	{ 0x1.249ef00000000p+19, "599287.5" },
	{ 0x1.46ce333333333p+19, "669297.6" },
	{ 0x1.902c48ccccccdp+19, "819554.275" },
	{ -0x1.573d051eb851fp+15, "-43934.51" },
	{ -0x1.021aec9ba5e35p+17, "-132149.8485" },
	{ -0x1.9390891bef49dp+19, "-826500.28466" },
	{ -0x1.1fcee66666666p+16, "-73678.9" },
	{ 0x1.b70f551eb851fp+18, "449597.33" },
	{ 0x1.e18e200000000p+19, "986225.0" },
	{ -0x1.54ac532cf312bp+19, "-697698.599237" },
	{ 0x1.2b517eb851eb8p+19, "613003.96" },
	{ 0x1.b3d55653c9abbp+17, "223146.674432" },
	{ 0x1.332a25785729bp+18, "314536.58547" },
	{ -0x1.5005e4c0d05f8p+19, "-688175.14853686" },
	{ -0x1.685e000000000p+19, "-738032.0" },
	{ 0x1.2457400000000p+19, "598714.0" },
	{ 0x1.9f542e147ae14p+15, "53162.09" },
	{ -0x1.028e9020c49bap+17, "-132381.126" },
	{ 0x1.3e82d020c49bap+19, "652310.504" },
	{ -0x1.ccf191916872bp+19, "-944012.549" },
	{ -0x1.945cac7ae147bp+18, "-414066.695" },
	{ 0x1.017ff2342edbbp+19, "527359.56887" },
	{ -0x1.d5fd9a3497b74p+18, "-481270.40946" },
	{ 0x1.465cc00000000p+19, "668390.0" },
	{ 0x1.9068439aaa3adp+19, "820034.11263" },
	{ 0x1.84620013bb893p+19, "795408.00240876" },
	{ -0x1.360bbab2cf8b2p+17, "-158743.45858187" },
	{ -0x1.68952f5c28f5cp+19, "-738473.48" },
	{ 0x1.6f4a000000000p+15, "47013.0" },
	{ 0x1.6c11666666666p+19, "745611.2" },
	{ 0x1.a80aa3d70a3d7p+17, "217109.28" },
	{ -0x1.3ff9526b18472p+19, "-655306.5755731" },
	{ 0x1.d13d400000000p+17, "238202.5" },
	{ 0x1.b9373ff2e48e9p+16, "112951.2498" },
	{ 0x0.0000000000001p-1022, "5e-324" },
	{ 0x0.0002000000000p-1022, "6.7903865311e-313" },
	{ 0x1.0000000000000p-1000, "9.332636185032189e-302" },
	{ 0x1.0000000000000p-963, "1.2826677504057426e-290" },
	{ 0x1.0000000000000p-926, "1.7628851326804976e-279" },
	{ 0x1.0000000000000p-889, "2.4228908772695546e-268" },
	{ 0x1.0000000000000p-852, "3.329995865487836e-257" },
	{ 0x1.0000000000000p-815, "4.5767114681873503e-246" },
	{ 0x1.0000000000000p-778, "6.290184345309701e-235" },
	{ 0x1.0000000000000p-741, "8.645163535653227e-224" },
	{ 0x1.0000000000000p-704, "1.188182228934475e-212" },
	{ 0x1.0000000000000p-667, "1.6330252207878255e-201" },
	{ 0x1.0000000000000p-630, "2.2444127733846047e-190" },
	{ 0x1.0000000000000p-593, "3.084697427331692e-179" },
	{ 0x1.0000000000000p-556, "4.239575861902385e-168" },
	{ 0x1.0000000000000p-519, "5.826828696250162e-157" },
	{ 0x1.0000000000000p-482, "8.008332380732404e-146" },
	{ 0x1.0000000000000p-445, "1.1006568214637918e-134" },
	{ 0x1.0000000000000p-408, "1.512731216738015e-123" },
	{ 0x1.0000000000000p-371, "2.07908195312898e-112" },
	{ 0x1.0000000000000p-334, "2.8574684782056875e-101" },
	{ 0x1.0000000000000p-297, "3.9272747722381812e-90" },
	{ 0x1.0000000000000p-260, "5.397605346934028e-79" },
	{ 0x1.0000000000000p-223, "7.418412301374843e-68" },
	{ 0x1.0000000000000p-186, "1.0195788231247695e-56" },
	{ 0x1.0000000000000p-149, "1.401298464324817e-45" },
	{ 0x1.0000000000000p-112, "1.925929944387236e-34" },
	{ 0x1.0000000000000p-75, "2.6469779601696886e-23" },
	{ 0x1.0000000000000p-38, "3.637978807091713e-12" },
	{ 0x1.0000000000000p-1, "0.5" },
	{ 0x1.0000000000000p+36, "68719476736.0" },
	{ 0x1.0000000000000p+73, "9.44473296573929e+21" },
	{ 0x1.0000000000000p+110, "1.298074214633707e+33" },
	{ 0x1.0000000000000p+147, "1.78405961588245e+44" },
	{ 0x1.0000000000000p+184, "2.4519928653854222e+55" },
	{ 0x1.0000000000000p+221, "3.36999333339383e+66" },
	{ 0x1.0000000000000p+258, "4.631683569492648e+77" },
	{ 0x1.0000000000000p+295, "6.365737426045269e+88" },
	{ 0x1.0000000000000p+332, "8.749002899132048e+99" },
	{ 0x1.0000000000000p+369, "1.2024538023802026e+111" },
	{ 0x1.0000000000000p+406, "1.6526399219756215e+122" },
	{ 0x1.0000000000000p+443, "2.2713710134237715e+133" },
	{ 0x1.0000000000000p+480, "3.1217485503159922e+144" },
	{ 0x1.0000000000000p+517, "4.290498537581631e+155" },
	{ 0x1.0000000000000p+554, "5.896816288783659e+166" },
	{ 0x1.0000000000000p+591, "8.10452259547069e+177" },
	{ 0x1.0000000000000p+628, "1.1138771039116688e+189" },
	{ 0x1.0000000000000p+665, "1.5309010345804195e+200" },
	{ 0x1.0000000000000p+702, "2.1040543606193494e+211" },
	{ 0x1.0000000000000p+739, "2.891790293717215e+222" },
	{ 0x1.0000000000000p+776, "3.974446316289815e+233" },
	{ 0x1.0000000000000p+813, "5.462437423415177e+244" },
	{ 0x1.0000000000000p+850, "7.5075168288047e+255" },
	{ 0x1.0000000000000p+887, "1.0318252561243462e+267" },
	{ 0x1.0000000000000p+924, "1.418129833677085e+278" },
	{ 0x1.0000000000000p+961, "1.94906280228e+289" },
	{ 0x1.0000000000000p+998, "2.6787715179656683e+300" },
};

static void
test_record_pyfloat(void)
{
	for (gsize i = 0; i < G_N_ELEMENTS(float_cases); i++) {
		g_autoptr(GString) out = g_string_new(NULL);
		g_autoptr(GString) neg = g_string_new(NULL);
		g_autofree gchar *neg_expected = NULL;

		sfl_append_pyfloat(out, float_cases[i].value);
		g_assert_cmpstr(out->str, ==, float_cases[i].repr);

		/* the sign never changes the digits */
		sfl_append_pyfloat(neg, -float_cases[i].value);
		neg_expected = float_cases[i].repr[0] == '-'
				       ? g_strdup(float_cases[i].repr + 1)
				       : g_strconcat("-", float_cases[i].repr, NULL);
		g_assert_cmpstr(neg->str, ==, neg_expected);
	}
}

static void
test_record_nonfinite(void)
{
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(SflRecord) record = sfl_record_new();
	g_autofree gchar *line = NULL;
	g_autofree gchar *s_inf = NULL;
	g_autofree gchar *s_nan = NULL;

	sfl_append_pyfloat(out, INFINITY);
	g_string_append_c(out, ' ');
	sfl_append_pyfloat(out, -INFINITY);
	g_string_append_c(out, ' ');
	sfl_append_pyfloat(out, NAN);
	g_assert_cmpstr(out->str, ==, "inf -inf nan");

	/* json.dumps({"a": inf, "b": -inf, "c": nan, "d": -0.0}, sort_keys=True) */
	sfl_record_add_real(record, "c", NAN);
	sfl_record_add_real(record, "b", -INFINITY);
	sfl_record_add_real(record, "a", INFINITY);
	sfl_record_add_real(record, "d", -0.0);
	line = render(record);
	g_assert_cmpstr(line, ==, "{\"a\": Infinity, \"b\": -Infinity, \"c\": NaN, \"d\": -0.0}");
	s_inf = pystr(sfl_record_lookup(record, "a"));
	s_nan = pystr(sfl_record_lookup(record, "c"));
	g_assert_cmpstr(s_inf, ==, "inf");
	g_assert_cmpstr(s_nan, ==, "nan");
}

typedef struct {
	const gchar *value;
	gsize len;
	const gchar *json;
} StringCase;

static void
test_record_strings(void)
{
	/* json.dumps(value) for ASCII, escapes, control characters, BMP and astral text */
	static const StringCase cases[] = {
		{ "plain", 5, "\"plain\"" },
		{ "", 0, "\"\"" },
		{ "quote\" back\\slash", 17, "\"quote\\\" back\\\\slash\"" },
		{ "nl\ncr\rtab\tbs\010ff\014", 16, "\"nl\\ncr\\rtab\\tbs\\bff\\f\"" },
		{ "\000\001\037\177", 4, "\"\\u0000\\u0001\\u001f\\u007f\"" },
		{ "caf\303\251", 5, "\"caf\\u00e9\"" },
		{ "\344\270\255\346\226\207", 6, "\"\\u4e2d\\u6587\"" },
		{ "\360\237\230\200 smile", 10, "\"\\ud83d\\ude00 smile\"" },
		{ "\364\217\277\277", 4, "\"\\udbff\\udfff\"" },
		{ "\342\200\250\342\200\251", 6, "\"\\u2028\\u2029\"" },
		{ "mixed \303\251\"\\\n\360\237\222\251 end", 19,
		  "\"mixed \\u00e9\\\"\\\\\\n\\ud83d\\udca9 end\"" },
		{ "\357\273\277bom", 6, "\"\\ufeffbom\"" },
		{ "a\000b", 3, "\"a\\u0000b\"" },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(SflRecord) record = sfl_record_new();
		g_autofree gchar *line = NULL;
		g_autofree gchar *expected = NULL;
		g_autofree gchar *str = NULL;

		sfl_record_add_string(record, "k", cases[i].value, cases[i].len);
		line = render(record);
		expected = g_strdup_printf("{\"k\": %s}", cases[i].json);
		g_assert_cmpstr(line, ==, expected);

		/* str() of a string is the string itself */
		str = pystr(sfl_record_get_field(record, 0));
		g_assert_cmpmem(str, strlen(str), cases[i].value,
				strlen(cases[i].value) < cases[i].len ? strlen(cases[i].value)
								      : cases[i].len);
	}
}

static void
test_record_sorted_keys(void)
{
	/* keys sort by code point, which UTF-8 byte order preserves */
	static const gchar *const keys[] = {
		"z",  "Z", "\303\251", "\360\237\230\200",  "\357\277\277", "a b", "_", "A",
		"10", "9", "",	       "\303\251t\303\251",
	};
	g_autoptr(SflRecord) record = sfl_record_new();
	g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func(g_free);
	g_autofree gchar *line = NULL;

	for (guint i = 0; i < G_N_ELEMENTS(keys); i++) {
		gchar *v = g_strdup_printf("v%u", i);
		g_ptr_array_add(values, v);
		sfl_record_add_string(record, keys[i], v, strlen(v));
	}
	line = render(record);
	g_assert_cmpstr(line, ==,
			"{\"\": \"v10\", \"10\": \"v8\", \"9\": \"v9\", \"A\": \"v7\", \"Z\": "
			"\"v1\", \"_\": \"v6\", \"a b\": \"v5\", \"z\": \"v0\", \"\\u00e9\": "
			"\"v2\", \"\\u00e9t\\u00e9\": \"v11\", \"\\uffff\": \"v4\", "
			"\"\\ud83d\\ude00\": \"v3\"}");
}

static void
test_record_scalars(void)
{
	g_autoptr(SflRecord) record = sfl_record_new();
	g_autofree gchar *line = NULL;
	static const struct {
		const gchar *name;
		const gchar *str;
	} expected[] = {
		{ "int", "-9223372036854775808" },
		{ "max", "9223372036854775807" },
		{ "zero", "0" },
		{ "yes", "True" },
		{ "no", "False" },
		{ "none", "None" },
		{ "real", "12899.0" },
	};

	sfl_record_add_int(record, "int", G_MININT64);
	sfl_record_add_int(record, "max", G_MAXINT64);
	sfl_record_add_int(record, "zero", 0);
	sfl_record_add_bool(record, "yes", TRUE);
	sfl_record_add_bool(record, "no", FALSE);
	sfl_record_add_null(record, "none");
	sfl_record_add_real(record, "real", 12899.0);

	line = render(record);
	g_assert_cmpstr(line, ==,
			"{\"int\": -9223372036854775808, \"max\": 9223372036854775807, \"no\": "
			"false, \"none\": null, \"real\": 12899.0, \"yes\": true, \"zero\": 0}");
	for (guint i = 0; i < G_N_ELEMENTS(expected); i++) {
		g_autofree gchar *s = pystr(sfl_record_lookup(record, expected[i].name));
		g_assert_cmpstr(s, ==, expected[i].str);
	}
	g_assert_null(sfl_record_lookup_string(record, "int"));
}

/* a SOQL record as the REST API returns it, with the attributes object and nested values */
static const gchar soql_record[] =
	"{\"attributes\": {\"type\": \"LoginEvent\", \"url\": "
	"\"/services/data/v60.0/sobjects/LoginEvent/0Yw5e00000AbCdE\"}, \"Id\": "
	"\"0Yw5e00000AbCdE\", \"EventDate\": \"2026-06-30T01:02:03.000+0000\", \"LoginType\": "
	"\"Application\", \"SourceIp\": \"10.1.2.3\", \"Score\": 0.5, \"Count\": 12, \"Flag\": "
	"true, \"Off\": false, \"Nothing\": null, \"Nested\": {\"b\": [1, 2.0, \"x\", {\"z\": 1, "
	"\"a\": null}], \"a\": \"\\u00e9\"}, \"Platform\": \"Mac OSX \\u00e9\\ud83d\\ude00\", "
	"\"Big\": 1e300, \"Tiny\": 1e-7, \"Empty\": {}, \"List\": [], \"Quotes\": {\"s\": "
	"\"it's\", \"d\": \"say \\\"hi\\\"\", \"both\": \"it's \\\"x\\\"\", \"ctl\": "
	"\"a\\nb\\tc\\u0001\\u00a0\\u200b\\\\\"}, \"Neg\": -42, \"Zero\": 0.0}";
static const gchar soql_expected[] =
	"{\"Big\": 1e+300, \"Count\": 12, \"Empty\": {}, \"EventDate\": "
	"\"2026-06-30T01:02:03.000+0000\", \"Flag\": true, \"Id\": \"0Yw5e00000AbCdE\", \"List\": "
	"[], \"LoginType\": \"Application\", \"Neg\": -42, \"Nested\": {\"a\": \"\\u00e9\", \"b\": "
	"[1, 2.0, \"x\", {\"a\": null, \"z\": 1}]}, \"Nothing\": null, \"Off\": false, "
	"\"Platform\": \"Mac OSX \\u00e9\\ud83d\\ude00\", \"Quotes\": {\"both\": \"it's "
	"\\\"x\\\"\", \"ctl\": \"a\\nb\\tc\\u0001\\u00a0\\u200b\\\\\", \"d\": \"say \\\"hi\\\"\", "
	"\"s\": \"it's\"}, \"Score\": 0.5, \"SourceIp\": \"10.1.2.3\", \"Tiny\": 1e-07, \"Zero\": "
	"0.0, \"attributes\": {\"type\": \"LoginEvent\", \"url\": "
	"\"/services/data/v60.0/sobjects/LoginEvent/0Yw5e00000AbCdE\"}}";

static void
test_record_soql(void)
{
	static const struct {
		const gchar *name;
		const gchar *str;
	} strs[] = {
		{ "attributes", "{'type': 'LoginEvent', 'url': "
				"'/services/data/v60.0/sobjects/LoginEvent/0Yw5e00000AbCdE'}" },
		{ "Nested", "{'b': [1, 2.0, 'x', {'z': 1, 'a': None}], 'a': '\303\251'}" },
		{ "Quotes", "{'s': \"it's\", 'd': 'say \"hi\"', 'both': 'it\\'s \"x\"', 'ctl': "
			    "'a\\nb\\tc\\x01\\xa0\\u200b\\\\'}" },
		{ "Score", "0.5" },
		{ "Count", "12" },
		{ "Flag", "True" },
		{ "Off", "False" },
		{ "Nothing", "None" },
		{ "Big", "1e+300" },
		{ "Tiny", "1e-07" },
		{ "Empty", "{}" },
		{ "List", "[]" },
		{ "Platform", "Mac OSX \303\251\360\237\230\200" },
		{ "Neg", "-42" },
		{ "Zero", "0.0" },
		{ "Id", "0Yw5e00000AbCdE" },
	};
	g_autoptr(json_t) doc = NULL;
	g_autoptr(SflRecord) record = sfl_record_new();
	g_autofree gchar *line = NULL;
	json_error_t jerr;

	doc = json_loads(soql_record, 0, &jerr);
	g_assert_nonnull(doc);
	sfl_record_add_json_object(record, doc);
	g_assert_cmpuint(sfl_record_get_n_fields(record), ==, json_object_size(doc));
	g_assert_cmpstr(sfl_record_get_field(record, 0)->name, ==, "attributes");
	g_assert_cmpint(sfl_record_get_field(record, 0)->type, ==, SFL_VALUE_JSON);

	line = render(record);
	g_assert_cmpstr(line, ==, soql_expected);

	/* str(value): nested dicts keep their own order and use Python's repr */
	for (guint i = 0; i < G_N_ELEMENTS(strs); i++) {
		const SflField *field = sfl_record_lookup(record, strs[i].name);
		g_autofree gchar *s = NULL;
		g_assert_nonnull(field);
		s = pystr(field);
		g_assert_cmpstr(s, ==, strs[i].str);
	}
	g_assert_cmpstr(sfl_record_lookup_string(record, "Id"), ==, "0Yw5e00000AbCdE");
	g_assert_null(sfl_record_lookup_string(record, "Count"));
	g_assert_null(sfl_record_lookup(record, "id"));
}

static void
test_record_edit(void)
{
	g_autoptr(SflRecord) record = sfl_record_new();
	g_autofree gchar *line1 = NULL;
	g_autofree gchar *line2 = NULL;
	g_autofree gchar *line3 = NULL;
	gchar name_buf[8] = "temp";

	/* a CSV header naming a column twice: the dict the original built kept the last value */
	sfl_record_add_string(record, "a", "1", 1);
	sfl_record_add_string(record, "b", "2", 1);
	sfl_record_add_string(record, "a", "3", 1);
	g_assert_cmpstr(sfl_record_lookup_string(record, "a"), ==, "3");
	line1 = render(record);
	g_assert_cmpstr(line1, ==, "{\"a\": \"3\", \"b\": \"2\"}");

	/* replace keeps the position, append copies the name */
	sfl_record_set_string(record, "b", "new\"value", -1);
	sfl_record_set_string(record, name_buf, "appended", 4);
	strcpy(name_buf, "gone");
	g_assert_cmpuint(sfl_record_get_n_fields(record), ==, 4);
	g_assert_cmpstr(sfl_record_get_field(record, 1)->name, ==, "b");
	g_assert_cmpstr(sfl_record_get_field(record, 1)->str, ==, "new\"value");
	g_assert_cmpstr(sfl_record_lookup_string(record, "temp"), ==, "appe");
	line2 = render(record);
	g_assert_cmpstr(line2, ==, "{\"a\": \"3\", \"b\": \"new\\\"value\", \"temp\": \"appe\"}");

	/* remove takes every field of that name, the others keep their order */
	g_assert_true(sfl_record_remove(record, "a"));
	g_assert_false(sfl_record_remove(record, "a"));
	g_assert_false(sfl_record_remove(record, "missing"));
	g_assert_cmpuint(sfl_record_get_n_fields(record), ==, 2);
	g_assert_cmpstr(sfl_record_get_field(record, 0)->name, ==, "b");
	line3 = render(record);
	g_assert_cmpstr(line3, ==, "{\"b\": \"new\\\"value\", \"temp\": \"appe\"}");

	sfl_record_reset(record);
	g_assert_cmpuint(sfl_record_get_n_fields(record), ==, 0);
	{
		g_autofree gchar *empty = render(record);
		g_assert_cmpstr(empty, ==, "{}");
	}
}

/*
 * 1000 rows through one record, as a source drives it: two headers taking turns (the sort
 * order must follow), names set through the arena that land at the same address with a
 * different text from one row to the next, and rewritten values.
 */
static void
test_record_reuse(void)
{
	static const gchar *const header_a[] = { "USER_ID",   "EVENT_TYPE", "TIMESTAMP",
						 "CLIENT_IP", "URI",	    "REQUEST_ID" };
	/* header_a sorted, with the extra name that sorts first / last */
	static const guint order_a[] = { 3, 1, 5, 2, 4, 0 };
	static const gchar *const header_b[] = { "b", "a", "c" };
	static const guint order_b[] = { 1, 0, 2 };
	g_autoptr(SflRecord) record = sfl_record_new();
	g_autoptr(GString) out = g_string_new(NULL);
	const gchar *extra_name_prev = NULL;
	guint same_address = 0;

	for (guint row = 0; row < 1000; row++) {
		gboolean use_a = row % 5 < 3;
		const gchar *const *header = use_a ? header_a : header_b;
		const guint *order = use_a ? order_a : order_b;
		guint n = use_a ? G_N_ELEMENTS(header_a) : G_N_ELEMENTS(header_b);
		gboolean even = row % 2 == 0;
		const gchar *extra = even ? "zz_extra" : "AA_extra";
		g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func(g_free);
		g_autoptr(GString) expected = g_string_new("{");
		guint rewrite = row % 7 == 0 ? order[n - 1] : G_MAXUINT;

		sfl_record_reset(record);
		for (guint k = 0; k < n; k++) {
			gchar *v = g_strdup_printf("r%u-%s", row, header[k]);
			g_ptr_array_add(values, v);
			sfl_record_add_string(record, header[k], v, strlen(v));
		}
		/* same lengths every row, so the arena hands out the same addresses */
		sfl_record_set_string(record, extra, even ? "even" : "oddd", -1);
		if (rewrite != G_MAXUINT)
			sfl_record_set_string(record, header[rewrite], "rewritten", -1);

		if (extra_name_prev == sfl_record_get_field(record, n)->name)
			same_address++;
		extra_name_prev = sfl_record_get_field(record, n)->name;

		if (!even)
			g_string_append(expected, "\"AA_extra\": \"oddd\", ");
		for (guint k = 0; k < n; k++) {
			const gchar *name = header[order[k]];
			if (order[k] == rewrite)
				g_string_append_printf(expected, "\"%s\": \"rewritten\"", name);
			else
				g_string_append_printf(expected, "\"%s\": \"r%u-%s\"", name, row,
						       name);
			if (k + 1 < n)
				g_string_append(expected, ", ");
		}
		if (even)
			g_string_append(expected, ", \"zz_extra\": \"even\"");
		g_string_append_c(expected, '}');

		g_string_truncate(out, 0);
		sfl_record_append_json(record, out);
		g_assert_cmpstr(out->str, ==, expected->str);
	}
	/* the scenario the sort cache must survive really happened */
	g_assert_cmpuint(same_address, >, 500);
}

static void
test_record_arena(void)
{
	g_autoptr(SflRecord) record = sfl_record_new();
	g_autofree gchar *big = g_malloc(3 * 1024 * 1024 + 1);
	const gchar *copies[5000];

	memset(big, 'x', 3 * 1024 * 1024);
	big[3 * 1024 * 1024] = '\0';
	for (guint round = 0; round < 3; round++) {
		/* many small strings over several blocks stay valid together until reset */
		for (guint i = 0; i < G_N_ELEMENTS(copies); i++) {
			g_autofree gchar *text = g_strdup_printf("value-%u-%u", round, i);
			copies[i] = sfl_record_intern(record, text, -1);
		}
		sfl_record_set_string(record, "big", big, -1);
		for (guint i = 0; i < G_N_ELEMENTS(copies); i++) {
			g_autofree gchar *text = g_strdup_printf("value-%u-%u", round, i);
			g_assert_cmpstr(copies[i], ==, text);
		}
		g_assert_cmpuint(sfl_record_get_field(record, 0)->len, ==, 3 * 1024 * 1024);
		g_assert_cmpint(memcmp(sfl_record_lookup_string(record, "big"), big, 1024), ==, 0);
		g_assert_cmpstr(sfl_record_intern(record, "abc", 2), ==, "ab");
		sfl_record_reset(record);
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/record/pyfloat", test_record_pyfloat);
	g_test_add_func("/record/nonfinite", test_record_nonfinite);
	g_test_add_func("/record/strings", test_record_strings);
	g_test_add_func("/record/sorted-keys", test_record_sorted_keys);
	g_test_add_func("/record/scalars", test_record_scalars);
	g_test_add_func("/record/soql", test_record_soql);
	g_test_add_func("/record/edit", test_record_edit);
	g_test_add_func("/record/reuse", test_record_reuse);
	g_test_add_func("/record/arena", test_record_arena);
	return g_test_run();
}
