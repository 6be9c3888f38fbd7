# Source: https://github.com/seimy6681/kor_children_ssd_detection/blob/27df8a5b603542935665300b79ad1db37470657c/wav2vec2_asr_huggingface/asr_finetuning_xls-r.py
# Report: audit of an XLS-R (wav2vec2) CTC fine-tuning script for Korean children's speech: the HF Trainer gets a CER compute_metrics and evaluates every 1000 steps, but TrainingArguments sets no eval_accumulation_steps, so every eval batch's (batch x frames x vocab) CTC logits are concatenated on the GPU for the whole test fold before compute_metrics sees them
# Shape: csv -> datasets with Audio(16 kHz), processor built from a jamo vocab, a CTC padding collator dataclass, compute_metrics doing argmax + batch_decode + jiwer.cer, a seed loop building Wav2Vec2ForCTC, TrainingArguments(evaluation_strategy="steps"), Trainer(..., compute_metrics=...)
# Expect: TML017 line 73
from dataclasses import dataclass
from typing import Dict, List, Union

import jiwer
import numpy as np
import torch
from datasets import Audio, load_dataset
from transformers import (Trainer, TrainingArguments, Wav2Vec2CTCTokenizer, Wav2Vec2FeatureExtractor,
                          Wav2Vec2ForCTC, Wav2Vec2Processor)

DROP = ["disease_type", "age", "gender", "subgroup", "id", "target_text", "asr_text"]
tokenizer = Wav2Vec2CTCTokenizer("./vocab_jrnl.json", unk_token="[UNK]", pad_token="[PAD]", word_delimiter_token="|")
feature_extractor = Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0,
                                             do_normalize=True, return_attention_mask=True)
processor = Wav2Vec2Processor(feature_extractor=feature_extractor, tokenizer=tokenizer)


def load_split(path):
    ds = load_dataset("csv", data_files={"split": path}, delimiter=",")["split"]
    return ds.remove_columns(DROP).cast_column("audio", Audio(sampling_rate=16_000))


def prepare_dataset(batch):
    audio = batch["audio"]
    batch["input_values"] = processor(audio["array"], sampling_rate=audio["sampling_rate"]).input_values[0]
    batch["labels"] = processor(text=batch["human_text_jamo"]).input_ids
    return batch


@dataclass
class DataCollatorCTCWithPadding:
    processor: Wav2Vec2Processor
    padding: Union[bool, str] = True

    def __call__(self, features: List[Dict]) -> Dict[str, torch.Tensor]:
        inputs = [{"input_values": f["input_values"]} for f in features]
        labels = [{"input_ids": f["labels"]} for f in features]
        batch = self.processor.pad(inputs, padding=self.padding, return_tensors="pt")
        labels_batch = self.processor.pad(labels=labels, padding=self.padding, return_tensors="pt")
        batch["labels"] = labels_batch["input_ids"].masked_fill(labels_batch.attention_mask.ne(1), -100)
        return batch


def compute_metrics(pred):
    pred_ids = np.argmax(pred.predictions, axis=-1)
    pred.label_ids[pred.label_ids == -100] = processor.tokenizer.pad_token_id
    pred_str = processor.batch_decode(pred_ids)
    label_str = processor.batch_decode(pred.label_ids, group_tokens=False)
    return {"cer": jiwer.cer(label_str, pred_str)}


def main(train_csv, test_csv, seeds=range(42, 43)):
    train = load_split(train_csv).map(prepare_dataset, remove_columns=["audio", "human_text_jamo"])
    test = load_split(test_csv).map(prepare_dataset, remove_columns=["audio", "human_text_jamo"])
    collator = DataCollatorCTCWithPadding(processor=processor)
    for seed in seeds:
        torch.manual_seed(seed)
        model = Wav2Vec2ForCTC.from_pretrained(
            "facebook/wav2vec2-xls-r-300m", ctc_loss_reduction="mean", mask_time_prob=0.05,
            pad_token_id=processor.tokenizer.pad_token_id, vocab_size=len(processor.tokenizer),
        )
        model.freeze_feature_encoder()
        args = TrainingArguments(
            seed=seed, output_dir=f"/data/temp/finetuning_baseline_{seed}", group_by_length=True,
            per_device_train_batch_size=8, gradient_accumulation_steps=2, evaluation_strategy="steps",
            num_train_epochs=30, fp16=True, save_steps=100, eval_steps=1000, logging_steps=10,
            learning_rate=3e-4, warmup_steps=500, save_total_limit=2,
        )
        trainer = Trainer(model=model, data_collator=collator, args=args, compute_metrics=compute_metrics, train_dataset=train, eval_dataset=test, tokenizer=processor.feature_extractor)  # expect: TML017
        trainer.train()
        model.save_pretrained(args.output_dir)
        print(trainer.evaluate())
