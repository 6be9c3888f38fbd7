# Source: https://github.com/salesforce/ALBEF/blob/fb384204472feab2a85bd4f5790d7889c31672c9/models/model_vqa.py
# Report: ALBEF VQA fine-tuning with momentum distillation (issue #66, https://github.com/salesforce/ALBEF/issues/66: GPU memory rises continuously during VQA fine-tuning); the original EMA of the momentum encoders is a @torch.no_grad() method on .data
# Shape: the same in-place EMA (param_m.mul_().add_(param)) called from forward before the no_grad block, but the method keeps ALBEF's @torch.no_grad() decorator, so the momentum weights never join the graph
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from torch import nn


class ALBEF(nn.Module):
    def __init__(self, visual_encoder, text_encoder, text_decoder,
                 visual_encoder_m, text_encoder_m, text_decoder_m,
                 tokenizer, config):
        super().__init__()
        self.tokenizer = tokenizer
        self.distill = config['distill']
        self.visual_encoder = visual_encoder
        self.text_encoder = text_encoder
        self.text_decoder = text_decoder
        if self.distill:
            self.visual_encoder_m = visual_encoder_m
            self.text_encoder_m = text_encoder_m
            self.text_decoder_m = text_decoder_m
            self.model_pairs = [[self.visual_encoder, self.visual_encoder_m],
                                [self.text_encoder, self.text_encoder_m],
                                [self.text_decoder, self.text_decoder_m]]
            self.copy_params()
            self.momentum = 0.995

    @torch.no_grad()
    def copy_params(self):
        for model_pair in self.model_pairs:
            for param, param_m in zip(model_pair[0].parameters(),
                                      model_pair[1].parameters()):
                param_m.data.copy_(param.data)
                param_m.requires_grad = False

    def forward(self, image, question, answer, alpha=0, k=None, weights=None):
        image_embeds = self.visual_encoder(image)
        image_atts = torch.ones(image_embeds.size()[:-1], dtype=torch.long,
                                device=image.device)
        answer_targets = answer.input_ids.masked_fill(
            answer.input_ids == self.tokenizer.pad_token_id, -100)
        question_output = self.text_encoder(
            question.input_ids, attention_mask=question.attention_mask,
            encoder_hidden_states=image_embeds,
            encoder_attention_mask=image_atts, return_dict=True)
        question_states = torch.repeat_interleave(
            question_output.last_hidden_state, torch.as_tensor(k, device=image.device), dim=0)
        question_atts = torch.repeat_interleave(
            question.attention_mask, torch.as_tensor(k, device=image.device), dim=0)

        soft_labels = None
        if self.distill:
            self._momentum_update()
            with torch.no_grad():
                image_embeds_m = self.visual_encoder_m(image)
                question_output_m = self.text_encoder_m(
                    question.input_ids, attention_mask=question.attention_mask,
                    encoder_hidden_states=image_embeds_m,
                    encoder_attention_mask=image_atts, return_dict=True)
                states_m = torch.repeat_interleave(
                    question_output_m.last_hidden_state,
                    torch.as_tensor(k, device=image.device), dim=0)
                logits_m = self.text_decoder_m(
                    answer.input_ids, attention_mask=answer.attention_mask,
                    encoder_hidden_states=states_m,
                    encoder_attention_mask=question_atts, return_logits=True)
                soft_labels = F.softmax(logits_m, dim=-1)

        answer_output = self.text_decoder(
            answer.input_ids, attention_mask=answer.attention_mask,
            encoder_hidden_states=question_states,
            encoder_attention_mask=question_atts, labels=answer_targets,
            return_dict=True, soft_labels=soft_labels, alpha=alpha,
            reduction='none')
        loss = weights * answer_output.loss
        return loss.sum() / image.size(0)

    @torch.no_grad()
    def _momentum_update(self):
        for model_pair in self.model_pairs:
            for param, param_m in zip(model_pair[0].parameters(),
                                      model_pair[1].parameters()):
                param_m.mul_(self.momentum).add_(param, alpha=1. - self.momentum)
