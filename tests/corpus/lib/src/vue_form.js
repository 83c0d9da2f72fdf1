import { createApp, ref, watch } from "vue/dist/vue.esm-bundler.js";
createApp({ setup() { const city = ref(""); watch(city, v => record(v)); return { city }; },
  template: `<label>Delivery city <input v-model="city"></label>` }).mount("#root");
