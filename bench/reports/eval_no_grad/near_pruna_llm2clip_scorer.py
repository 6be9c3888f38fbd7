# Source: https://github.com/PrunaAI/pruna/pull/648
# Report: review of src/pruna/evaluation/metrics/metric_oneig_reasoning.py: in _LLM2CLIPScorer.score, get_text_features runs outside torch.no_grad() while get_image_features is wrapped; the CLIP model was only put in eval mode (parameters still require grad), so a graph is built for every scored batch
# Shape: the fix the review asks for: the text projection joins the image forward inside one `with torch.no_grad():` block; normalisation and .tolist() stay outside
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from PIL import Image


def _to_pil_list(images):
    out = []
    for img in images:
        if isinstance(img, Image.Image):
            out.append(img)
        elif isinstance(img, torch.Tensor):
            arr = (img.clamp(0, 1) * 255).byte().permute(1, 2, 0).cpu().numpy()
            out.append(Image.fromarray(arr))
    return out


class _LLM2CLIPScorer:
    """Scores image/prompt alignment with LLM2CLIP (LLM text encoder + CLIP vision tower)."""

    def __init__(self, clip_model_id, l2v_model_id, device="cuda"):
        self.clip_model_id = clip_model_id
        self.l2v_model_id = l2v_model_id
        self.device = device
        self._clip_model = None
        self._processor = None
        self._l2v = None

    def _load_models(self):
        if self._clip_model is not None:
            return
        from transformers import AutoModel, CLIPImageProcessor
        from llm2vec import LLM2Vec

        self._processor = CLIPImageProcessor.from_pretrained(self.clip_model_id)
        self._clip_model = AutoModel.from_pretrained(self.clip_model_id, trust_remote_code=True).to(self.device)
        self._clip_model.train(mode=False)
        self._l2v = LLM2Vec.from_pretrained(self.l2v_model_id, device_map=self.device)

    def score(self, images, text_prompt):
        self._load_models()
        pil_images = _to_pil_list(images)
        if not pil_images:
            return None
        input_pixels = self._processor(images=pil_images, return_tensors="pt").pixel_values.to(self.device)
        captions = [text_prompt]
        text_features = self._l2v.encode(captions, convert_to_tensor=True, device=self.device).to(self.device)
        with torch.no_grad():
            text_features = self._clip_model.get_text_features(text_features)
            image_features = self._clip_model.get_image_features(input_pixels)
        image_features = F.normalize(image_features, dim=-1)
        text_features = F.normalize(text_features, dim=-1)
        scores = (image_features @ text_features.T).squeeze(-1)
        return scores.float().cpu().tolist()


class OneIGReasoningMetric:
    def __init__(self, scorer):
        self.scorer = scorer
        self.scores = []

    def update(self, prompts, images):
        for prompt, image_batch in zip(prompts, images):
            batch_scores = self.scorer.score(image_batch, prompt)
            if batch_scores is not None:
                self.scores.extend(batch_scores)

    def compute(self):
        return sum(self.scores) / max(len(self.scores), 1)
